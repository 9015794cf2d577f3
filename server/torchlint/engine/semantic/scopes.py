"""Python's scoping rules, in one place: which scope binds a name read in a given scope.

"The value of `net` here" must be the `net` Python would use: a local of this function (assigned,
a parameter, a loop or `with` target, an import, a `def`), a `global`/`nonlocal` declaration's
scope, an enclosing function's local (closures), else the module's. A class body's names are
invisible to its methods, a comprehension's targets are its own, and `:=` binds in the function
around a comprehension. Analyses that key facts by name (device moves: "was `net` moved?") key them
by the scope that binds the name, so one function's `net` never answers for another's.

The rules are read over `ast` trees, the one representation of every file (inference.py asks them
of each file's summary). The scopes of defs and classes come from the statements alone (cheap, for
every project file); those of lambdas and comprehensions from the expressions, on the first question
about one. The linted file's libcst tree asks the same facts (`Scopes`): its defs and classes are
mapped to the summary's by their order in the source, its lambdas and comprehensions likewise.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field

import libcst as cst

from torchlint.engine.core.walk import iter_nodes, iter_statements

Def = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
Scoped = ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef  # scopes of statements
Comprehension = ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp
Chain = tuple[Def, ...]  # enclosing defs, outermost first
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
DEF_CLASSES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
DEF_TYPES = frozenset(DEF_CLASSES)  # compared by `type(node) in`: cheaper than isinstance per statement
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_BLOCKS_LAST_FIRST = ("cases", "finalbody", "orelse", "handlers", "body")  # source order, reversed
# the libcst node types of the same scopes, and the ast type each maps to
_CST_DEFS = frozenset({cst.FunctionDef, cst.ClassDef})
_CST_EXPRESSION_SCOPES = {
    cst.Lambda: ast.Lambda,
    cst.ListComp: ast.ListComp,
    cst.SetComp: ast.SetComp,
    cst.DictComp: ast.DictComp,
    cst.GeneratorExp: ast.GeneratorExp,
}


@dataclass(eq=False)
class ScopeFacts:
    """What one scope of a file binds, by Python's rules."""

    node: Scoped | ast.Lambda | Comprehension
    parent: ScopeFacts | None
    chain: Chain  # the defs around the scope's body, itself included
    local: set[str] = field(default_factory=set)
    definitions: set[str] = field(default_factory=set)  # bound by `import`, `def` or `class` (known by name)
    declared_global: set[str] = field(default_factory=set)
    declared_nonlocal: set[str] = field(default_factory=set)
    params: list[str] = field(default_factory=list)  # a function's or lambda's parameters, in order
    derived: dict[str, object] = field(default_factory=dict)  # facts other analyses read of its body, kept here


@dataclass
class FileScopes:
    """One file's scopes: those of its statements read once per content (kept with its summary), those of
    its expressions (lambdas, comprehensions) on the first question about one."""

    scopes: dict[int, ScopeFacts]  # id(module, def or class node) -> facts
    definitions: list[Def]  # in source order (pre-order)
    functions: dict[str, list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, Chain]]]  # every def, by name
    module: ast.Module
    text: str
    declarers: dict[int, list[tuple[ScopeFacts, set[str]]]] | None = None  # see `declarers`
    derived: dict[str, object] = field(default_factory=dict)  # facts other analyses read of the file, kept here
    _expressions: list[ScopeFacts] | None = None

    def expression_scopes(self) -> list[ScopeFacts]:
        """The scopes of every lambda and comprehension, in source order."""
        if self._expressions is None:
            self._expressions = _read_expressions(self)
        return self._expressions


def read(module: ast.Module, text: str) -> FileScopes:
    """Every scope of statements and the names it binds (a name is bound by a statement, or by `:=`)."""
    out = FileScopes({}, [], {}, module, text)
    root = out.scopes[id(module)] = ScopeFacts(module, None, ())
    walrus = ":=" in text
    todo: list[tuple[ast.AST, ScopeFacts]] = [(s, root) for s in reversed(module.body)]
    while todo:
        stmt, scope = todo.pop()
        if type(stmt) in DEF_TYPES:
            assert isinstance(stmt, Def)
            todo.extend(_open(out, scope, stmt, walrus))
            continue
        _bind_statement(root, scope, stmt)
        if walrus and isinstance(stmt, ast.stmt):
            for part in ast.iter_child_nodes(stmt):
                if not isinstance(part, (ast.stmt, ast.excepthandler, ast.match_case)):
                    scope.local.update(_walrus_names(part))
        for name in _BLOCKS_LAST_FIRST:  # onto a stack: the first block comes off first, in source order
            block = getattr(stmt, name, None)
            if type(block) is list:
                todo.extend((s, scope) for s in reversed(block))
    return out


def owner(scope: ScopeFacts, name: str, module: ScopeFacts) -> ScopeFacts | None:
    """The scope whose binding of `name` a read in `scope` sees (None: a builtin or unbound)."""
    if name in scope.declared_global:
        return module
    if name in scope.local and name not in scope.declared_nonlocal:
        return scope
    outer = scope.parent
    while outer is not None:
        if isinstance(outer.node, ast.ClassDef):  # a class body's names are not visible to its functions
            outer = outer.parent
            continue
        if outer.parent is None:
            return outer if name in outer.local else None
        if name in outer.declared_global:
            return module
        if name in outer.local and name not in outer.declared_nonlocal:
            return outer
        outer = outer.parent
    return None


def declarers(file: FileScopes) -> dict[int, list[tuple[ScopeFacts, set[str]]]]:
    """id(scope node) -> the scopes whose `global` / `nonlocal` declarations bind names it owns, with those
    names (`global model; model = Net()` in a function assigns the module's `model`)."""
    if file.declarers is None:
        module = file.scopes[id(file.module)]
        found: dict[int, list[tuple[ScopeFacts, set[str]]]] = {}
        for scope in file.scopes.values():
            targets: dict[int, tuple[ScopeFacts, set[str]]] = {}
            for name in scope.declared_global | scope.declared_nonlocal:
                bound = owner(scope, name, module)
                if bound is not None and bound is not scope:
                    targets.setdefault(id(bound.node), (bound, set()))[1].add(name)
            for key, (_, names) in targets.items():
                found.setdefault(key, []).append((scope, names))
        file.declarers = found
    return file.declarers


# -- reading the statements ------------------------------------------------------------------------
def _params(args: ast.arguments) -> list[str]:
    names = [a.arg for a in (*args.posonlyargs, *args.args)]
    if args.vararg is not None:
        names.append(args.vararg.arg)
    names.extend(a.arg for a in args.kwonlyargs)
    if args.kwarg is not None:
        names.append(args.kwarg.arg)
    return names


def _header(node: Def | ast.Lambda) -> list[ast.expr]:
    """The parts of a def, class or lambda evaluated where it is defined (its parameters bind inside)."""
    if isinstance(node, ast.ClassDef):
        return [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]
    args = node.args
    parts: list[ast.expr | None] = [*args.defaults, *args.kw_defaults]
    if not isinstance(node, ast.Lambda):
        every = (*args.posonlyargs, *args.args, args.vararg, *args.kwonlyargs, args.kwarg)
        parts += [*node.decorator_list, *(a.annotation for a in every if a is not None), node.returns]
    return [p for p in parts if p is not None]


def _open(out: FileScopes, scope: ScopeFacts, node: Def, walrus: bool) -> list[tuple[ast.AST, ScopeFacts]]:
    """A def or class binds its name in `scope` and opens its own scope: its body's statements, to read."""
    scope.local.add(node.name)
    scope.definitions.add(node.name)
    if walrus:
        for part in _header(node):
            scope.local.update(_walrus_names(part))
    out.definitions.append(node)
    inner = out.scopes[id(node)] = ScopeFacts(node, scope, (*scope.chain, node))
    if isinstance(node, FUNCTIONS):
        out.functions.setdefault(node.name, []).append((node, scope.chain))
        inner.params = _params(node.args)
        inner.local.update(inner.params)
    return [(stmt, inner) for stmt in reversed(node.body)]


def _walrus_names(expr: ast.AST) -> Iterator[str]:
    """Names `:=` binds in an expression: in the function around it, through comprehensions, not lambdas."""
    todo = [expr]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
            yield node.target.id
        if not isinstance(node, ast.Lambda):
            todo.extend(ast.iter_child_nodes(node))


def _bind_statement(root: ScopeFacts, scope: ScopeFacts, node: ast.AST) -> None:
    """The names statement (or `except` / `case` clause) `node` binds or declares in `scope`."""
    if isinstance(node, ast.Assign):
        for target in node.targets:
            _store(scope, target)
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
        _store(scope, node.target)
    elif isinstance(node, (ast.With, ast.AsyncWith)):
        for item in node.items:
            if item.optional_vars is not None:
                _store(scope, item.optional_vars)
    elif isinstance(node, ast.Delete):
        for target in node.targets:
            _store(scope, target)
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        for alias in node.names:
            if alias.name != "*":
                name = alias.asname or alias.name.partition(".")[0]
                scope.local.add(name)
                scope.definitions.add(name)
    elif isinstance(node, ast.Global):
        scope.declared_global.update(node.names)
        root.local.update(node.names)  # `global x; x = ...` binds a module name
    elif isinstance(node, ast.Nonlocal):
        scope.declared_nonlocal.update(node.names)
    elif isinstance(node, ast.ExceptHandler):
        if node.name:
            scope.local.add(node.name)
    elif isinstance(node, ast.match_case):
        for p in ast.walk(node.pattern):
            bound = p.rest if isinstance(p, ast.MatchMapping) else getattr(p, "name", None)
            if isinstance(bound, str):
                scope.local.add(bound)


def _store(scope: ScopeFacts, target: ast.expr) -> None:
    """The names an assignment, loop, `with` or `del` target binds (`a`, `a, (b, *c)`; not `x.y` or `x[i]`)."""
    if isinstance(target, ast.Name):
        scope.local.add(target.id)
    elif isinstance(target, (ast.Tuple, ast.List)):
        for el in target.elts:
            _store(scope, el)
    elif isinstance(target, ast.Starred):
        _store(scope, target.value)


# -- reading the expressions: lambdas and comprehensions ----------------------------------------------
def _read_expressions(file: FileScopes) -> list[ScopeFacts]:
    """The scope of every lambda and comprehension (its parent: the scope its code is evaluated in), sorted by
    where it starts."""
    found: list[ScopeFacts] = []
    todo: list[tuple[ast.AST, ScopeFacts]] = [(file.module, file.scopes[id(file.module)])]
    while todo:
        node, scope = todo.pop()
        if type(node) in DEF_TYPES:
            assert isinstance(node, Def)
            inner = file.scopes[id(node)]
            todo.extend((part, scope) for part in _header(node))
            todo.extend((stmt, inner) for stmt in node.body)
        elif isinstance(node, ast.Lambda):
            inner = ScopeFacts(node, scope, scope.chain, params=_params(node.args))
            inner.local.update(inner.params)
            inner.local.update(_walrus_names(node.body))
            found.append(inner)
            todo.extend((part, scope) for part in _header(node))
            todo.append((node.body, inner))
        elif isinstance(node, COMPREHENSIONS):
            inner = ScopeFacts(node, scope, scope.chain)
            found.append(inner)
            for i, clause in enumerate(node.generators):
                _store(inner, clause.target)
                todo.append((clause.iter, scope if i == 0 else inner))  # the first iterable: outside
                todo.extend((cond, inner) for cond in clause.ifs)
            values = (node.key, node.value) if isinstance(node, ast.DictComp) else (node.elt,)
            todo.extend((value, inner) for value in values)
        else:
            todo.extend((child, scope) for child in ast.iter_child_nodes(node))
    found.sort(key=lambda s: (getattr(s.node, "lineno", 0), getattr(s.node, "col_offset", 0)))
    return found


# -- the linted file's libcst tree -----------------------------------------------------------------------
@dataclass(eq=False)
class ScopeInfo:
    """One scope of the libcst tree: its node and the facts of the summary's same scope."""

    node: cst.CSTNode
    facts: ScopeFacts
    parent: ScopeInfo | None

    @property
    def local(self) -> set[str]:
        return self.facts.local

    @property
    def definitions(self) -> set[str]:
        return self.facts.definitions

    @property
    def params(self) -> list[str]:
        return self.facts.params

    @property
    def is_class(self) -> bool:
        return type(self.node) is cst.ClassDef


class Scopes:
    """The scopes of one libcst module, answered from the `ast` facts of the same text (`file`): each def and
    class is the summary's def or class of the same rank in source order (and name), each lambda and
    comprehension the one of the same rank (and type). A scope not so matched (the text CPython refuses) is
    unknown: no name is bound there."""

    def __init__(self, module: cst.Module, file: FileScopes) -> None:
        self.module = module
        self.file = file
        self._module = file.scopes[id(file.module)]
        self._facts: dict[int, ScopeFacts] = {id(module): self._module}  # id(libcst node) -> facts
        self._nodes: dict[int, cst.CSTNode] = {id(file.module): module}  # id(ast node) -> libcst node
        self._info: dict[int, ScopeInfo] = {}
        self._expressions_mapped = False
        defs = [n for n in iter_statements(module.body, into_functions=True) if type(n) in _CST_DEFS]
        if len(defs) == len(file.definitions) and all(
            d.name.value == a.name  # type: ignore[attr-defined]
            for d, a in zip(defs, file.definitions, strict=True)
        ):
            for d, a in zip(defs, file.definitions, strict=True):
                self._pair(d, file.scopes[id(a)])

    def definition(self, node: cst.CSTNode) -> Def | None:
        """The summary's def or class for this tree's `node`."""
        found = self._facts.get(id(node))
        return found.node if found is not None and isinstance(found.node, DEF_CLASSES) else None

    def info(self, node: cst.CSTNode) -> ScopeInfo | None:
        known = self._info.get(id(node))
        if known is not None:
            return known
        facts = self._facts_of(node)
        if facts is None:
            return None
        above = self._nodes.get(id(facts.parent.node)) if facts.parent is not None else None
        info = self._info[id(node)] = ScopeInfo(node, facts, self.info(above) if above is not None else None)
        return info

    def binding_scope(self, name: str, at: cst.CSTNode) -> cst.CSTNode | None:
        """The scope node whose binding of `name` a read in scope `at` sees; None: a builtin or unbound."""
        scope = self._facts_of(at)
        found = owner(scope, name, self._module) if scope is not None else None
        return self._nodes.get(id(found.node)) if found is not None else None

    def declarers(self, node: cst.CSTNode) -> list[tuple[cst.CSTNode, set[str]]]:
        """The scopes whose `global` / `nonlocal` declarations bind names of scope `node`, and those names
        (`global model; model = Net()` in a function assigns the module's `model`)."""
        facts = self._facts_of(node)
        if facts is None:
            return []
        found = declarers(self.file).get(id(facts.node), [])
        return [(self._nodes[id(s.node)], names) for s, names in found if id(s.node) in self._nodes]

    def is_parameter(self, name: str, scope_node: cst.CSTNode) -> bool:
        facts = self._facts_of(scope_node)
        return facts is not None and name in facts.params

    def _pair(self, node: cst.CSTNode, facts: ScopeFacts) -> None:
        self._facts[id(node)] = facts
        self._nodes[id(facts.node)] = node

    def _facts_of(self, node: cst.CSTNode) -> ScopeFacts | None:
        found = self._facts.get(id(node))
        if found is None and type(node) in _CST_EXPRESSION_SCOPES and not self._expressions_mapped:
            self._map_expressions()
            found = self._facts.get(id(node))
        return found

    def _map_expressions(self) -> None:
        """Pair this tree's lambdas and comprehensions with the summary's, in source order."""
        self._expressions_mapped = True
        mine = [n for n in iter_nodes(self.module) if type(n) in _CST_EXPRESSION_SCOPES]
        theirs = self.file.expression_scopes()
        if len(mine) == len(theirs) and all(
            _CST_EXPRESSION_SCOPES[type(n)] is type(s.node) for n, s in zip(mine, theirs, strict=True)
        ):
            for n, s in zip(mine, theirs, strict=True):
                self._pair(n, s)
