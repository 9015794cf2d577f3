"""Python's scoping rules: which scope a name read in a given scope refers to.

"The value of `net` here" must be the `net` Python would use: a local of this function (assigned,
a parameter, a loop or `with` target, an import, a `def`), a `global`/`nonlocal` declaration's
scope, an enclosing function's local (closures), else the module's. A class body's names are
invisible to its methods, and a comprehension's targets are its own. Analyses that key facts by
name (device moves: "was `net` moved?") key them by the scope that binds the name, so one
function's `net` never answers for another's.

One walk over the file on the first question (libcst's ScopeProvider costs several parses; this
reads only binding sites).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import cast

import libcst as cst

from torchlint.engine.core.walk import children, list_children, listed_children

_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)
_Comprehension = cst.ListComp | cst.SetComp | cst.DictComp | cst.GeneratorExp
_SPECIAL = frozenset({cst.FunctionDef, cst.Lambda, cst.ClassDef, *_COMPREHENSIONS})  # open a scope
# Nodes with no code inside (their children, if any, are names): nothing under them binds or opens a scope.
_LEAVES = frozenset({cst.Name, cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.Ellipsis, cst.Pass})
_BINDERS = frozenset(  # nodes that bind names themselves (Scopes._bind)
    {
        cst.AssignTarget,
        cst.AugAssign,
        cst.AnnAssign,
        cst.For,
        cst.Del,
        cst.WithItem,
        cst.ExceptHandler,
        cst.ExceptStarHandler,
        cst.NamedExpr,
        cst.Import,
        cst.ImportFrom,
        cst.Global,
        cst.Nonlocal,
        cst.MatchAs,
        cst.MatchStar,
        cst.MatchMapping,
    }
)


@dataclass(eq=False)
class ScopeInfo:
    node: cst.CSTNode
    parent: ScopeInfo | None
    local: set[str] = field(default_factory=set)
    declared_global: set[str] = field(default_factory=set)
    declared_nonlocal: set[str] = field(default_factory=set)
    params: list[str] = field(default_factory=list)  # a function's or lambda's parameters, in order
    definitions: set[str] = field(default_factory=set)  # bound by `import`, `def` or `class` (known by name)

    @property
    def is_class(self) -> bool:
        return type(self.node) is cst.ClassDef


def _bound_by_target(target: cst.CSTNode) -> Iterator[str]:
    """Names an assignment / loop / `with` / `del` target binds (`a`, `a, (b, *c)`); not `x.y` or `x[i]`."""
    if type(target) is cst.Name:
        yield target.value
    elif isinstance(target, (cst.Tuple, cst.List)):
        for el in target.elements:
            yield from _bound_by_target(el.value)
    elif type(target) is cst.StarredElement:
        yield from _bound_by_target(target.value)


def _defaults_and_annotations(params: cst.Parameters) -> list[cst.CSTNode]:
    """Parts of a signature read in the enclosing scope (the parameters bind in the function)."""
    parts: list[cst.CSTNode] = []
    for param in (*params.posonly_params, *params.params, *params.kwonly_params, params.star_arg, params.star_kwarg):
        if isinstance(param, cst.Param):
            parts.extend(part for part in (param.annotation, param.default) if part is not None)
    return parts


def _params(params: cst.Parameters) -> list[str]:
    names = [p.name.value for p in (*params.posonly_params, *params.params)]
    if isinstance(params.star_arg, cst.Param):
        names.append(params.star_arg.name.value)
    names.extend(p.name.value for p in params.kwonly_params)
    if params.star_kwarg is not None:
        names.append(params.star_kwarg.name.value)
    return names


class Scopes:
    """Every scope of one module and the names each binds."""

    def __init__(self, module: cst.Module) -> None:
        self.module = module
        self._info: dict[int, ScopeInfo] = {}  # id(scope node) -> info (the info keeps the node alive)
        self._declarers: dict[int, list[tuple[cst.CSTNode, set[str]]]] | None = None
        self._walk(module, self._open(module, None))

    def info(self, node: cst.CSTNode) -> ScopeInfo | None:
        return self._info.get(id(node))

    def binding_scope(self, name: str, at: cst.CSTNode) -> cst.CSTNode | None:
        """The scope node whose binding of `name` a read in scope `at` sees; None: a builtin or unbound."""
        scope = self.info(at)
        if scope is None:
            return None
        if name in scope.declared_global:
            return self.module
        if name in scope.local and name not in scope.declared_nonlocal:
            return scope.node
        outer = scope.parent
        while outer is not None:
            if outer.is_class:  # a class body's names are not visible to the functions inside it
                outer = outer.parent
                continue
            if outer.parent is None:  # the module
                return outer.node if name in outer.local else None
            if name in outer.declared_global:
                return self.module
            if name in outer.local and name not in outer.declared_nonlocal:
                return outer.node
            outer = outer.parent
        return None

    def declarers(self, node: cst.CSTNode) -> list[tuple[cst.CSTNode, set[str]]]:
        """The scopes whose `global` / `nonlocal` declarations bind names of scope `node`, and those names
        (`global model; model = Net()` in a function assigns the module's `model`)."""
        if self._declarers is None:
            found: dict[int, list[tuple[cst.CSTNode, set[str]]]] = {}
            for info in self._info.values():
                targets: dict[int, set[str]] = {}
                for name in info.declared_global | info.declared_nonlocal:
                    owner = self.binding_scope(name, info.node)
                    if owner is not None and owner is not info.node:
                        targets.setdefault(id(owner), set()).add(name)
                for owner_id, names in targets.items():
                    found.setdefault(owner_id, []).append((info.node, names))
            self._declarers = found
        return self._declarers.get(id(node), [])

    def is_parameter(self, name: str, scope_node: cst.CSTNode) -> bool:
        info = self.info(scope_node)
        return info is not None and name in info.params

    # -- building -------------------------------------------------------------------
    def _open(self, node: cst.CSTNode, parent: ScopeInfo | None) -> ScopeInfo:
        info = ScopeInfo(node, parent)
        self._info[id(node)] = info
        return info

    def _walk(self, root: cst.CSTNode, scope: ScopeInfo) -> None:
        """Every node under `root`, each in the scope it is evaluated in (a loop, not recursion: this visits
        every node of the file, and deeply nested code must not reach the recursion limit). Two stacks in
        step, the nodes and their scopes: most nodes are pushed with their parent's scope, in one extend."""
        nodes: list[cst.CSTNode] = list(children(root))
        scopes: list[ScopeInfo] = [scope] * len(nodes)
        pop_node, pop_scope, push_nodes, push_scopes = nodes.pop, scopes.pop, nodes.extend, scopes.extend
        listed = listed_children()  # `children`'s lists, read here directly: this visits every node

        def push(parts: list[tuple[cst.CSTNode, ScopeInfo]]) -> None:
            for part, where in parts:
                nodes.append(part)
                scopes.append(where)

        while nodes:
            node, scope = pop_node(), pop_scope()
            t = type(node)  # compared by type: isinstance() against libcst's ABC-based classes is slow
            if t in _LEAVES:
                continue
            if t not in _SPECIAL:
                if t in _BINDERS:
                    self._bind(node, scope)
                known = listed.get(id(node))
                kids = known[1] if known is not None else list_children(node)
                push_nodes(kids)
                push_scopes([scope] * len(kids))
            elif t is cst.FunctionDef or t is cst.Lambda:
                fn = cast(cst.FunctionDef | cst.Lambda, node)
                header: list[cst.CSTNode] = []
                if isinstance(fn, cst.FunctionDef):
                    scope.local.add(fn.name.value)
                    scope.definitions.add(fn.name.value)
                    # the header is evaluated where the def runs
                    header += fn.decorators
                    if fn.returns is not None:
                        header.append(fn.returns)
                header += _defaults_and_annotations(fn.params)
                push([(part, scope) for part in header])
                push([(fn.body, self._open_function(fn, fn.params, scope))])
            elif t is cst.ClassDef:
                cls = cast(cst.ClassDef, node)
                scope.local.add(cls.name.value)
                scope.definitions.add(cls.name.value)
                push([(header, scope) for header in (*cls.decorators, *cls.bases, *cls.keywords)])
                push([(cls.body, self._open(cls, scope))])
            else:
                push(self._comprehension(cast(_Comprehension, node), scope))

    def _open_function(self, node: cst.CSTNode, params: cst.Parameters, parent: ScopeInfo) -> ScopeInfo:
        inner = self._open(node, parent)
        inner.params = _params(params)
        inner.local.update(inner.params)
        return inner

    def _comprehension(self, node: _Comprehension, scope: ScopeInfo) -> list[tuple[cst.CSTNode, ScopeInfo]]:
        """Open a comprehension's scope; its parts, each with the scope it is evaluated in."""
        clause: cst.CompFor | None = node.for_in
        assert clause is not None, "a comprehension has a for clause"
        parts: list[tuple[cst.CSTNode, ScopeInfo]] = [(clause.iter, scope)]  # the first iterable: outside
        inner = self._open(node, scope)
        first = True
        while clause is not None:
            inner.local.update(_bound_by_target(clause.target))
            if not first:
                parts.append((clause.iter, inner))
            parts.extend((cond, inner) for cond in clause.ifs)
            first = False
            clause = clause.inner_for_in
        values = (node.key, node.value) if isinstance(node, cst.DictComp) else (node.elt,)
        parts.extend((value, inner) for value in values)
        return parts

    def _bind(self, node: cst.CSTNode, scope: ScopeInfo) -> None:
        """The names `node` itself binds in `scope`."""
        if isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.Del)):
            scope.local.update(_bound_by_target(node.target))
        elif isinstance(node, cst.WithItem):
            if node.asname is not None:
                scope.local.update(_bound_by_target(node.asname.name))
        elif isinstance(node, (cst.ExceptHandler, cst.ExceptStarHandler)):
            if node.name is not None:
                scope.local.update(_bound_by_target(node.name.name))
        elif isinstance(node, cst.NamedExpr):
            target = scope  # `:=` in a comprehension binds in the enclosing function
            while isinstance(target.node, _COMPREHENSIONS) and target.parent is not None:
                target = target.parent
            target.local.update(_bound_by_target(node.target))
        elif isinstance(node, (cst.Import, cst.ImportFrom)):
            if not isinstance(node.names, cst.ImportStar):
                for alias in node.names:
                    self._bind_alias(alias, scope)
        elif isinstance(node, cst.Global):
            names = {item.name.value for item in node.names}
            scope.declared_global.update(names)
            self._info[id(self.module)].local.update(names)  # `global x; x = ...` binds a module name
        elif isinstance(node, cst.Nonlocal):
            scope.declared_nonlocal.update(item.name.value for item in node.names)
        elif isinstance(node, (cst.MatchAs, cst.MatchStar)):
            if node.name is not None:
                scope.local.add(node.name.value)
        elif isinstance(node, cst.MatchMapping) and node.rest is not None:
            scope.local.add(node.rest.value)

    @staticmethod
    def _bind_alias(alias: cst.ImportAlias, scope: ScopeInfo) -> None:
        head: cst.BaseExpression = alias.name  # `import a.b` binds `a`
        while isinstance(head, cst.Attribute):
            head = head.value
        names = set(_bound_by_target(alias.asname.name if alias.asname is not None else head))
        scope.local.update(names)
        scope.definitions.update(names)
