"""What each name, `self.x` and expression of the file being linted is, at a point of its libcst tree.

Rules ask `ctx.kind(expr)` about libcst expressions; this evaluates them (constructors, library calls,
methods, operators), and reads every binding (what a name, parameter or `self.x` holds, what a function
of this file returns, what a class is) from inference.py: the one inference, over the file's `ast`
summary, that answers other files' questions about this one too. A name is never evidence: `def
train(model, opt)` with no caller leaves both unknown.

Which scope's binding a name read in a scope sees is scopes.py's answer (Python's rules), never a walk of
this module's own.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from functools import cache, cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import libcst as cst

from torchlint.engine.core.walk import iter_nodes, iter_statements
from torchlint.engine.semantic import call_sites, inference
from torchlint.engine.semantic.call_sites import CallSites
from torchlint.engine.semantic.inference import ClassKinds, Found, Inference
from torchlint.engine.semantic.kinds import (
    PASS_THROUGH,
    RETURNS,
    Kind,
    builtin_call_kind,
    kind_from_qualname,
    method_call_kind,
)
from torchlint.engine.semantic.names import Imports, dotted
from torchlint.engine.semantic.project import ModuleSummary
from torchlint.engine.semantic.scopes import Scoped, Scopes

if TYPE_CHECKING:
    from torchlint.engine.semantic.project import Project

_NUMBERS = frozenset({cst.Integer, cst.Float})
_CONTAINERS = frozenset({cst.Dict, cst.List, cst.Tuple, cst.DictComp, cst.ListComp, cst.Set, cst.SetComp})
_STRINGS = frozenset({cst.SimpleString, cst.ConcatenatedString, cst.FormattedString})
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


class ModuleClasses:
    """The kind of each class of the file (inference.py, over the file's `ast` summary as any other file
    asks it): `modules` are its nn.Module subclasses."""

    def __init__(self, classes: list[cst.ClassDef], kinds: dict[cst.ClassDef, Kind]) -> None:
        self.by_name = {c.name.value: c for c in classes}  # the last definition of a name wins
        self.kinds = kinds
        self.modules = {c for c, kind in kinds.items() if kind & Kind.MODEL}

    def kind(self, c: cst.ClassDef) -> Kind:
        """What an instance of `c` is."""
        return self.kinds.get(c, Kind.NONE)

    def __contains__(self, c: cst.ClassDef) -> bool:
        return c in self.modules


class Scope:
    """A module, class or function body of the file: what its names are bound to is inference.py's answer
    (a comprehension's targets, made here for `element_kind`, are its own)."""

    def __init__(
        self, node: cst.CSTNode, parent: Scope | None, semantics: Semantics, own: dict[str, Kind] | None = None
    ) -> None:
        self.node = node
        self.parent = parent
        self.semantics = semantics
        self._own = own

    @property
    def bindings(self) -> dict[str, Kind]:
        """The kinds of the names this scope binds (`self.x` for a class)."""
        return self._own if self._own is not None else self.semantics.bindings(self.node)

    def lookup(self, name: str) -> Kind | None:
        """Kind of `name` read in this scope, in the scope Python's rules say binds it (scopes.py): NONE
        when that scope binds it in a way no kind is known of; None when no scope does (a builtin), or the
        binding is an import, `def` or `class` (`infer` resolves those by name)."""
        owner = self.semantics.scopes().binding_scope(name, self.node)
        if owner is None:
            return None
        scope: Scope | None = self
        while scope is not None and scope.node is not owner:
            scope = scope.parent
        kind = scope._own.get(name) if scope is not None and scope._own is not None else None
        if kind is None:
            kind = self.semantics.binding(owner, name)
        if kind is not None:
            return kind
        return None if name in self.semantics.named(owner) else Kind.NONE

    def class_scope(self) -> Scope | None:
        scope: Scope | None = self
        while scope is not None and not isinstance(scope.node, cst.ClassDef):
            scope = scope.parent
        return scope


class Semantics:
    def __init__(
        self,
        module: cst.Module,
        imports: Imports,
        project: Project | None = None,
        folder: Path | None = None,
        sites: Callable[[], CallSites] | None = None,
        *,
        scopes: Callable[[], Scopes],  # which scope binds a name read where (the context's)
        summary: Callable[[], ModuleSummary | None],  # this file's ast summary, as other files see it
    ) -> None:
        self.module = module
        self.imports = imports
        self.project = project
        self.folder = folder  # the checked file's folder: where its sibling imports resolve
        self._summary = summary
        self._scopes: dict[cst.CSTNode, Scope] = {}
        self.sites = sites or cache(lambda: call_sites.index(module))
        self.scopes = scopes

    @cached_property
    def inference(self) -> Inference:
        """The one inference (inference.py) over this file's `ast` summary, as any other file asks it; this
        lint's own (its answers are not kept for other lints: the text may be an unsaved buffer)."""
        summary = self._summary() or ModuleSummary(Path(""), "", "", "")  # CPython cannot parse it: nothing known
        return Inference(self.project if self.folder is not None else None, summary, {}, self.folder)

    def definition(self, func: cst.BaseExpression) -> Found | None:
        """The class, top-level function or global `func` names: this file's own (a name it defines and does not
        import) or a project file's, as its summary lists them (inference.symbol)."""
        own = self.inference.summary
        if isinstance(func, cst.Name) and func.value not in self.imports.table:
            name = func.value
            return (own, name) if name in own.classes or name in own.functions or name in own.globals else None
        q = self.imports.qualname(func)
        if q is None or self.folder is None:
            return None
        return inference.symbol(self.project, own, q, self.folder)

    def class_kinds(self, summary: ModuleSummary) -> ClassKinds:
        """The classes of this file's summary or of a project file's (as `definition` found it)."""
        if summary is self.inference.summary:
            return self.inference.classes
        assert self.project is not None, "another file's summary comes from the project"
        return inference.for_file(self.project, summary).classes

    def _ast_scope(self, node: cst.CSTNode) -> Scoped | None:
        """The summary's node for this tree's module, def or class `node`."""
        return self.inference.facts.module if node is self.module else self.scopes().definition(node)

    def bindings(self, node: cst.CSTNode) -> dict[str, Kind]:
        """The kinds of the names scope `node` binds (inference.py's, over the file's summary)."""
        other = self._ast_scope(node)
        return self.inference.bindings(other) if other is not None else {}

    def binding(self, node: cst.CSTNode, name: str) -> Kind | None:
        """Kind of `name` as scope `node` binds it (None: not known, or known by name)."""
        other = self._ast_scope(node)
        return self.inference.binding(other, name) if other is not None else None

    @cached_property
    def classes(self) -> ModuleClasses:
        """The file's classes' kinds: made at the first question (their bases are read across the project)."""
        classes = [c for c in iter_statements(self.module.body, into_functions=True) if isinstance(c, cst.ClassDef)]
        own = [(c, self.scopes().definition(c)) for c in classes]
        return ModuleClasses(classes, {c: self.inference.classes.of(d) for c, d in own if isinstance(d, ast.ClassDef)})

    def release(self) -> None:
        """Forget the scopes (each refers back to this object): see FileContext.release."""
        self._scopes.clear()

    def scope_for(self, node: cst.CSTNode, parent: Scope | None) -> Scope:
        scope = self._scopes.get(node)
        if scope is None:
            scope = self._scopes[node] = Scope(node, parent, self)
        return scope

    def scope_at(self, node: cst.CSTNode) -> Scope:
        """The scope of a function, class or module node, its enclosing scopes as Python nests them."""
        scope = self._scopes.get(node)
        if scope is None:
            info = self.scopes().info(node)
            parent = info.parent if info is not None else None
            while parent is not None and type(parent.node) not in (cst.FunctionDef, cst.ClassDef, cst.Module):
                parent = parent.parent  # a lambda or comprehension around a def has no Scope of its own
            scope = self.scope_for(node, self.scope_at(parent.node) if parent is not None else None)
        return scope

    def named(self, node: cst.CSTNode) -> set[str]:
        """Names scope `node` binds by `import`, `def` or `class`: `infer` resolves them by name."""
        info = self.scopes().info(node)
        return info.definitions if info is not None else set()

    def infer(self, expr: cst.BaseExpression, scope: Scope) -> Kind:
        """Best-effort kind of the value of `expr` evaluated in `scope`."""
        # types compared, not isinstance(): against a libcst class not the object's own, isinstance runs
        # ABCMeta's Python-level check, and this is asked thousands of times a file
        if type(expr) is cst.Name:
            kind = scope.lookup(expr.value)
            if kind is not None:
                return kind
            q = self.imports.qualname(expr)
            if q is not None and self.project is not None and self.folder is not None:
                return inference.global_kind(self.project, q, self.folder)  # `from config import device`
            return Kind.NONE
        if type(expr) is cst.Attribute:
            name = dotted(expr)
            if name and name.startswith("self.") and name.count(".") == 1:
                cls = scope.class_scope()
                if cls is not None and name in cls.bindings:
                    return cls.bindings[name]
                return Kind.NONE
            if expr.attr.value == "module":  # ddp_model.module -> the bare model
                return self.infer(expr.value, scope) & Kind.MODEL
            if expr.attr.value == "loss" and self.infer(expr.value, scope) & Kind.TENSOR:
                return Kind.LOSS  # `model(**batch).loss` (Hugging Face outputs)
            return Kind.NONE
        if type(expr) is cst.Call:
            return self._infer_call(expr, scope)
        if type(expr) is cst.BinaryOperation:
            left, right = self.infer(expr.left, scope), self.infer(expr.right, scope)
            both = left | right
            if both & Kind.LOSS:
                return Kind.LOSS
            if both & Kind.TENSOR:
                return Kind.TENSOR
            return Kind.NUMBER if (left | right) & Kind.NUMBER else Kind.NONE
        if type(expr) in _NUMBERS:
            return Kind.NUMBER
        if type(expr) in _CONTAINERS:
            return Kind.CONTAINER
        if type(expr) in _STRINGS:
            return Kind.NONE
        if type(expr) is cst.Subscript:
            inner = self.infer(expr.value, scope)
            return inner & (Kind.TENSOR | Kind.BATCH)
        return Kind.NONE

    def element_kind(self, expr: cst.BaseExpression, scope: Scope) -> Kind:
        """Kind shared by every element of a list/tuple/comprehension/list variable, else NONE."""
        if isinstance(expr, (cst.GeneratorExp, cst.ListComp)):
            return self.infer(expr.elt, self._comprehension_scope(expr, scope))
        if isinstance(expr, (cst.List, cst.Tuple)):
            return _common([self.infer(el.value, scope) for el in expr.elements if isinstance(el, cst.Element)])
        if isinstance(expr, cst.Name):
            return self._list_elements(expr.value, scope)
        return Kind.NONE

    def _comprehension_scope(self, comp: cst.GeneratorExp | cst.ListComp, scope: Scope) -> Scope:
        bindings: dict[str, Kind] = {}
        inner = Scope(comp, scope, self, bindings)
        clause: cst.CompFor | None = comp.for_in
        while clause is not None:
            kind = Kind.NONE
            it = clause.iter
            if isinstance(it, cst.Call) and isinstance(it.func, cst.Attribute) and it.func.attr.value == "parameters":
                if self.infer(it.func.value, scope) & Kind.MODEL:
                    kind = Kind.TENSOR
            else:
                kind = self.element_kind(it, inner)
            target = clause.target
            for t in [e.value for e in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else [target]:
                if isinstance(t, cst.Name):
                    bindings[t.value] = kind
            clause = clause.inner_for_in
        return inner

    def _list_elements(self, name: str, scope: Scope) -> Kind:
        """`xs = []` then `xs.append(v)` / `xs = [v for ...]`: the kind of every v, if all agree."""
        kinds = []
        for node in iter_nodes(scope.node, into_functions=False):
            if type(node) is not cst.Assign and type(node) is not cst.Call:
                continue  # the cheap test first: this visits every node of the scope
            if isinstance(node, cst.Assign) and any(
                isinstance(t.target, cst.Name) and t.target.value == name for t in node.targets
            ):
                if not isinstance(node.value, (cst.List, cst.ListComp)) or len(node.targets) != 1:
                    return Kind.NONE
                if isinstance(node.value, cst.ListComp) or node.value.elements:
                    kinds.append(self.element_kind(node.value, scope))
            elif (
                isinstance(node, cst.Call)
                and isinstance(node.func, cst.Attribute)
                and isinstance(node.func.value, cst.Name)
                and node.func.value.value == name
                and node.func.attr.value in ("append", "extend", "insert")
            ):
                if node.func.attr.value != "append" or len(node.args) != 1:
                    return Kind.NONE
                kinds.append(self.infer(node.args[0].value, scope))
        return _common(kinds)

    def _infer_call(self, call: cst.Call, scope: Scope) -> Kind:
        func = call.func
        q = self.imports.qualname(func)
        if q is not None:
            if q in PASS_THROUGH and call.args:
                return self.infer(call.args[0].value, scope)
            kind = kind_from_qualname(q)
            if kind or q in RETURNS:  # a table entry of NONE: deliberately unknown
                return kind
            if self.project is not None and self.folder is not None:
                kind = inference.call_kind(self.project, q, self.folder)
                if kind:
                    return kind
        if isinstance(func, cst.Name):
            local = self._local_callable(func.value, scope)
            if local is not None:
                return local
            builtin = builtin_call_kind(func.value)
            if builtin:
                return builtin
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            receiver = self.infer(func.value, scope)
            result = method_call_kind(method, receiver)
            if result is not None:
                return result
            if method in ("prepare", "setup") and call.args and receiver & Kind.ACCELERATOR:
                return self.infer(call.args[0].value, scope)
            if isinstance(func.value, cst.Name) and func.value.value == "self":
                method_kind = self._method_returns(method, scope)
                if method_kind is not None:
                    return method_kind
        callee = self.infer(func, scope)
        if callee & Kind.CRITERION:
            return Kind.LOSS
        if callee & Kind.MODEL:
            return Kind.TENSOR
        return Kind.NONE

    # -- functions of this file -------------------------------------------------------
    def _local_callable(self, name: str, scope: Scope) -> Kind | None:
        """`Net(...)` / `build_model(...)` for a class or function defined in this file."""
        if scope.lookup(name) is not None:
            return None  # a variable holding something callable
        return self.inference.local_callable(name)

    def _method_returns(self, method: str, scope: Scope) -> Kind | None:
        cls_scope = scope.class_scope()
        cls = self.scopes().definition(cls_scope.node) if cls_scope is not None else None
        return self.inference.method_returns(method, cls) if isinstance(cls, ast.ClassDef) else None

    def functions(self) -> dict[str, list[tuple[cst.FunctionDef, tuple[cst.CSTNode, ...]]]]:
        """Every function and method of the file by name, with its enclosing scopes."""
        return self.sites().functions

    def scope_of_chain(self, chain: tuple[cst.CSTNode, ...]) -> Scope:
        scope = self.scope_for(self.module, None)
        for node in chain:
            scope = self.scope_for(node, scope)
        return scope

    def returns(self, fn: cst.FunctionDef) -> Kind:
        """The kind every `return` of `fn` agrees on: inference.py's answer, the one importers get."""
        other = self.scopes().definition(fn)
        return self.inference.returns(other) if isinstance(other, _FUNCTIONS) else Kind.NONE

    def arguments(self, fn: cst.FunctionDef, param: cst.Param) -> list[tuple[cst.BaseExpression, Scope]]:
        """(argument expression, caller scope) for `param` at each call of `fn` in this file; an argument
        nothing can be said of (`*args`, a missing argument without default) is a Name `__unknown__`."""
        chain = next((c for f, c in self.functions().get(fn.name.value, ()) if f is fn), None)
        if chain is None:
            return []
        return list(self._arguments(fn, self.scope_of_chain((*chain, fn)), param))

    def _arguments(
        self, fn: cst.FunctionDef, scope: Scope, param: cst.Param
    ) -> Iterator[tuple[cst.BaseExpression, Scope]]:
        """(argument expression, caller scope) for `param` at each call of `fn` in this file."""
        method = scope.parent is not None and isinstance(scope.parent.node, cst.ClassDef)
        positional = [*fn.params.posonly_params, *fn.params.params]
        index = next((i for i, p in enumerate(positional) if p is param), None)
        if method and index is not None:
            index -= 1  # `self` is bound by the call
        key = ("self" if method else "name", fn.name.value)
        sites = self.sites()
        for site in sites.by_key.get(key, ()) if method else sites.calls_of(fn):
            call, chain = site.call, site.chain
            if method and (scope.parent is None or scope.parent.node not in chain):
                continue
            if any(a.star for a in call.args):
                yield cst.Name("__unknown__"), self.scope_of_chain(chain)
                continue
            arg = _argument(call, param.name.value, index)
            caller = self.scope_of_chain(chain)
            if arg is not None:
                yield arg, caller
            elif param.default is None:
                yield cst.Name("__unknown__"), caller


def _argument(call: cst.Call, name: str, index: int | None) -> cst.BaseExpression | None:
    for a in call.args:
        if a.keyword is not None and a.keyword.value == name:
            return a.value
    positional = [a for a in call.args if a.keyword is None]
    if index is not None and 0 <= index < len(positional):
        return positional[index].value
    return None


def _common(kinds: list[Kind]) -> Kind:
    """TENSOR when every kind is a tensor or loss (and none a number); else NONE."""
    if kinds and all(k & (Kind.TENSOR | Kind.LOSS) and not k & Kind.NUMBER for k in kinds):
        return Kind.TENSOR
    return Kind.NONE
