"""What each expression of the file being linted is, at a point of its libcst tree: inference.py's answer.

Rules ask `ctx.kind(expr)` about libcst expressions; the kind is evaluated by inference.py (the one
inference, over the file's `ast` summary, that answers other files' questions about this one too) in the
summary's scope for the rule's (scopes.py pairs them), the expression handed over in its `ast` shape
(as_ast.py). Nothing here evaluates a kind: this maps the libcst tree's scopes, classes, functions and call
sites to the summary's. A name is never evidence: `def train(model, opt)` with no caller leaves both unknown.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from functools import cache, cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import libcst as cst

from torchlint.engine.core.walk import iter_statements
from torchlint.engine.semantic import call_sites, inference
from torchlint.engine.semantic.as_ast import AstExpressions
from torchlint.engine.semantic.call_sites import CallSites
from torchlint.engine.semantic.inference import ClassKinds, Found, Inference
from torchlint.engine.semantic.kinds import Kind
from torchlint.engine.semantic.names import Imports
from torchlint.engine.semantic.project import ModuleSummary
from torchlint.engine.semantic.scopes import Scoped, Scopes

if TYPE_CHECKING:
    from torchlint.engine.semantic.project import Project

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
    """A module, class or function body of the file, and the summary's same scope (`target`: None when
    CPython's tree has no such scope, and then nothing is known there)."""

    def __init__(self, node: cst.CSTNode, parent: Scope | None, semantics: Semantics) -> None:
        self.node = node
        self.parent = parent
        self.semantics = semantics

    @cached_property
    def target(self) -> Scoped | None:
        return self.semantics.ast_scope(self.node)

    @property
    def bindings(self) -> dict[str, Kind]:
        """The kinds of the names this scope binds (`self.x` for a class): inference.py's."""
        target = self.target
        return self.semantics.inference.bindings(target) if target is not None else {}

    def lookup(self, name: str) -> Kind | None:
        """Kind of `name` read in this scope, in the scope Python's rules say binds it: NONE when that scope
        binds it in a way no kind is known of; None when no scope does (a builtin), or the binding is an
        import, `def` or `class` (known by name)."""
        target = self.target
        return self.semantics.inference.lookup(name, target) if target is not None else None


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
        self._ast = AstExpressions()  # the expressions asked about, in inference.py's shapes
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

    def function_definition(
        self, func: cst.BaseExpression
    ) -> tuple[ModuleSummary, ast.FunctionDef | ast.AsyncFunctionDef] | None:
        """The top-level function `func` calls, this file's or a project file's, as its summary's `ast`."""
        found = self.definition(func)
        fn = found[0].functions.get(found[1]) if found is not None else None
        return (found[0], fn) if found is not None and fn is not None else None

    def class_kinds(self, summary: ModuleSummary) -> ClassKinds:
        """The classes of this file's summary or of a project file's (as `definition` found it)."""
        if summary is self.inference.summary:
            return self.inference.classes
        assert self.project is not None, "another file's summary comes from the project"
        return inference.for_file(self.project, summary).classes

    def ast_scope(self, node: cst.CSTNode) -> Scoped | None:
        """The summary's node for this tree's module, def or class `node`."""
        return self.inference.facts.module if node is self.module else self.scopes().definition(node)

    @cached_property
    def classes(self) -> ModuleClasses:
        """The file's classes' kinds: made at the first question (their bases are read across the project)."""
        classes = [c for c in iter_statements(self.module.body, into_functions=True) if type(c) is cst.ClassDef]
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

    def infer(self, expr: cst.BaseExpression, scope: Scope) -> Kind:
        """Kind of the value of `expr` evaluated in `scope`: inference.py's answer."""
        target = scope.target
        return self.inference.infer(self._ast(expr), target) if target is not None else Kind.NONE

    def element_kind(self, expr: cst.BaseExpression, scope: Scope) -> Kind:
        """Kind shared by every element of a list/tuple/comprehension/list variable, else NONE (inference.py's;
        a comprehension is the summary's own, whose targets its scope binds)."""
        target = scope.target
        if target is None:
            return Kind.NONE
        if type(expr) is cst.GeneratorExp or type(expr) is cst.ListComp:
            info = self.scopes().info(expr)
            comp = info.facts.node if info is not None else None
            return self.inference.element_kind(comp, target) if isinstance(comp, ast.expr) else Kind.NONE
        return self.inference.element_kind(self._ast(expr), target)

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

    def arguments(self, fn: cst.FunctionDef, param: cst.Param) -> list[tuple[cst.BaseExpression, Scope, cst.Call]]:
        """(argument expression, caller scope, call) for `param` at each call of `fn` in this file; an argument
        nothing can be said of (`*args`, a missing argument without default) is a Name `__unknown__`."""
        chain = next((c for f, c in self.functions().get(fn.name.value, ()) if f is fn), None)
        if chain is None:
            return []
        return list(self._arguments(fn, self.scope_of_chain((*chain, fn)), param))

    def _arguments(
        self, fn: cst.FunctionDef, scope: Scope, param: cst.Param
    ) -> Iterator[tuple[cst.BaseExpression, Scope, cst.Call]]:
        """(argument expression, caller scope, call) for `param` at each call of `fn` in this file."""
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
                yield cst.Name("__unknown__"), self.scope_of_chain(chain), call
                continue
            arg = _argument(call, param.name.value, index)
            caller = self.scope_of_chain(chain)
            if arg is not None:
                yield arg, caller, call
            elif param.default is None:
                yield cst.Name("__unknown__"), caller, call


def _argument(call: cst.Call, name: str, index: int | None) -> cst.BaseExpression | None:
    for a in call.args:
        if a.keyword is not None and a.keyword.value == name:
            return a.value
    positional = [a for a in call.args if a.keyword is None]
    if index is not None and 0 <= index < len(positional):
        return positional[index].value
    return None
