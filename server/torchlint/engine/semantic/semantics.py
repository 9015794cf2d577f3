"""Shared analyses: module classes, and what each name in a scope is bound to.

Flow-insensitive and deliberately light: for each scope we read its assignments
once (lazily, on first question) and infer a `Kind` for each target from the
assigned expression. Rules ask `ctx.kind(expr)`; none of them re-derives this.

Kinds come from evidence only (see kinds.py): constructors and library calls,
annotations, assignments, the project's classes and functions, and for a
parameter the arguments every call site in the file passes. A name is never
evidence: `def train(model, opt)` with no caller leaves both unknown.

Which scope's binding a name read in a scope sees is scopes.py's answer (Python's
rules), never a walk of this module's own. What a class is, and what another
file's function or global is, is inference.py's: the same answer any file gets.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from functools import cache, cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import libcst as cst

from torchlint.engine.core.walk import block_statements, iter_nodes, iter_statements, small_statements
from torchlint.engine.semantic import call_sites, inference
from torchlint.engine.semantic.call_sites import CallSites
from torchlint.engine.semantic.kinds import (
    PASS_THROUGH,
    RETURNS,
    SAME_OBJECT_METHODS,
    TENSOR_METHODS,
    Kind,
    agree,
    kind_from_annotation,
    kind_from_qualname,
)
from torchlint.engine.semantic.names import Imports, dotted
from torchlint.engine.semantic.project import ModuleSummary
from torchlint.engine.semantic.scopes import Scopes

if TYPE_CHECKING:
    from torchlint.engine.semantic.project import Project

_NUMBER_METHODS = frozenset({"item", "tolist", "__float__"})


_BUILTIN_CONTAINERS = frozenset({"dict", "list", "tuple", "set"})
_NUMBERS = frozenset({cst.Integer, cst.Float})
_CONTAINERS = frozenset({cst.Dict, cst.List, cst.Tuple, cst.DictComp, cst.ListComp, cst.Set, cst.SetComp})
_STRINGS = frozenset({cst.SimpleString, cst.ConcatenatedString, cst.FormattedString})


class ModuleClasses:
    """The kind of each class of the file (inference.py, over the file's `ast` summary as any other file
    asks it): `modules` are its nn.Module subclasses."""

    def __init__(
        self,
        module: cst.Module,
        summarized: Callable[[], ModuleSummary | None],
        project: Project | None,
        folder: Path | None,
    ) -> None:
        self.by_name: dict[str, cst.ClassDef] = {}
        classes = [n for n in iter_statements(module.body, into_functions=True) if type(n) is cst.ClassDef]
        for c in classes:
            self.by_name[c.name.value] = c
        self.kinds: dict[cst.ClassDef, Kind] = {}
        summary = summarized() if classes else None
        if summary is not None and len(summary.all_classes) == len(classes):  # the same text, the same classes
            kinds = inference.ClassKinds(project if folder is not None else None, summary, {}, folder)
            self.kinds = {c: kinds.of(a) for c, a in zip(classes, summary.all_classes)}
        self.modules = {c for c, kind in self.kinds.items() if kind & Kind.MODEL}

    def kind(self, c: cst.ClassDef) -> Kind:
        """What an instance of `c` is."""
        return self.kinds.get(c, Kind.NONE)

    def __contains__(self, c: cst.ClassDef) -> bool:
        return c in self.modules


def _targets(target: cst.BaseExpression) -> Iterator[tuple[cst.BaseExpression, int | None]]:
    """(target, position) pairs of an assignment target; position None = whole value."""
    if isinstance(target, (cst.Tuple, cst.List)):
        for i, el in enumerate(target.elements):
            if isinstance(el, cst.Element):
                yield el.value, i
    else:
        yield target, None


class Scope:
    """A module, class or function body and the kinds of the names bound in it."""

    def __init__(self, node: cst.CSTNode, parent: Scope | None, semantics: Semantics) -> None:
        self.node = node
        self.parent = parent
        self.semantics = semantics
        self._bindings: dict[str, Kind] | None = None
        # parameters whose kind only their call sites can tell: resolved on first lookup
        self._pending: dict[str, cst.Param] = {}
        # names this scope assigns but declares `global` / `nonlocal`: bound in the scope that owns them
        self._foreign: set[str] = set()
        self.exported: dict[str, Kind] = {}

    # -- lookup -----------------------------------------------------------
    @property
    def bindings(self) -> dict[str, Kind]:
        if self._bindings is None:
            self._bindings = {}
            info = self.semantics.scopes().info(self.node)
            if info is not None:
                self._foreign = info.declared_global | info.declared_nonlocal
            self._build()
        return self._bindings

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
        if scope is None:  # a scope outside this chain (a sibling method's scope hangs off another parent)
            scope = self.semantics.scope_at(owner)
        bindings = scope.bindings
        param = scope._pending.pop(name, None)
        if param is not None:
            scope._bind(name, self.semantics.param_kind(scope, param))
        kind = bindings.get(name)
        if kind is not None:
            return kind
        return None if name in self.semantics.named(owner) else Kind.NONE

    def class_scope(self) -> Scope | None:
        scope: Scope | None = self
        while scope is not None and not isinstance(scope.node, cst.ClassDef):
            scope = scope.parent
        return scope

    # -- building ---------------------------------------------------------
    def _body(self) -> Sequence[cst.BaseStatement]:
        node = self.node
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            return block_statements(node.body)
        return node.body if isinstance(node, cst.Module) else ()  # a comprehension has no statements

    def _bind(self, name: str, kind: Kind) -> None:
        """Record `name` as bound here (a NONE kind still shadows outer scopes)."""
        bindings = self.exported if name in self._foreign else self.bindings
        bindings[name] = bindings.get(name, Kind.NONE) | kind

    def _build(self) -> None:
        if isinstance(self.node, cst.FunctionDef):
            self._bind_params(self.node.params)
        if isinstance(self.node, cst.ClassDef):
            self._build_class_attributes(self.node)
            return
        for stmt in iter_statements(self._body()):  # types compared: see `infer`
            if type(stmt) is cst.For:
                self._bind_for(stmt)
            elif type(stmt) is cst.With:
                for item in stmt.items:
                    if item.asname is not None:
                        for t, _ in _targets(item.asname.name):
                            self._assign(t, self.semantics.infer(item.item, self))
            for small in small_statements(stmt):
                if type(small) is cst.Assign:
                    for assign_target in small.targets:
                        self._assign_value(assign_target.target, small.value)
                elif type(small) is cst.AnnAssign:
                    kind = kind_from_annotation(self.semantics.imports.qualname(small.annotation.annotation))
                    if small.value is not None:
                        kind |= self.semantics.infer(small.value, self)
                    self._assign(small.target, kind)
        # usage: anything we call .backward() on is a loss
        for node in self.semantics.backward_calls(self.node):
            assert isinstance(node.func, cst.Attribute), "backward_calls keeps method calls only"
            if (
                node.func.attr.value == "backward"
                and isinstance(node.func.value, cst.Name)
                and all(a.keyword is not None for a in node.args)
            ):
                self._bind(node.func.value.value, Kind.LOSS)
            elif (  # accelerator.backward(loss) / self.manual_backward(loss)
                (
                    node.func.attr.value == "manual_backward"
                    or node.func.attr.value == "backward"
                    and self.semantics.infer(node.func.value, self) & Kind.ACCELERATOR
                )
                and node.args
                and isinstance(node.args[0].value, cst.Name)
            ):
                self._bind(node.args[0].value.value, Kind.LOSS)
        for declarer, names in self.semantics.scopes().declarers(self.node):
            other = self.semantics.scope_at(declarer)
            other.bindings  # noqa: B018 - building it fills `exported`
            for name in names & other.exported.keys():
                self._bind(name, other.exported[name])

    def _assign_value(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)):
            for t, i in _targets(target):
                if i is not None and i < len(value.elements):
                    self._assign(t, self.semantics.infer(value.elements[i].value, self))
            return
        if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, cst.Call):
            # model, opt = accelerator.prepare(model, opt) / fabric.setup(...)
            if isinstance(value.func, cst.Attribute) and value.func.attr.value in ("prepare", "setup"):
                for t, i in _targets(target):
                    if i is not None and i < len(value.args):
                        self._assign(t, self.semantics.infer(value.args[i].value, self))
                return
        self._assign(target, self.semantics.infer(value, self))

    def _assign(self, target: cst.BaseExpression, kind: Kind) -> None:
        if isinstance(target, cst.Name):
            self._bind(target.value, kind)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for t, _ in _targets(target):
                self._assign(t, Kind.NONE)

    def _bind_for(self, stmt: cst.For) -> None:
        it = self.semantics.infer(stmt.iter, self)
        if it & Kind.DATALOADER or _iterates_loader(stmt.iter, self):
            for t, _ in _targets(stmt.target):
                for inner, _ in _targets(t):
                    if isinstance(inner, cst.Name):
                        self._bind(inner.value, Kind.BATCH)

    def _bind_params(self, params: cst.Parameters) -> None:
        for p in (*params.posonly_params, *params.params, *params.kwonly_params):
            kind = Kind.NONE
            if p.annotation is not None:
                kind = kind_from_annotation(self.semantics.imports.qualname(p.annotation.annotation))
            if not kind and p.default is not None:
                kind = self.semantics.infer(p.default, self.parent or self)
            if kind:
                self._bind(p.name.value, kind)
            else:
                self._pending[p.name.value] = p
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                self._bind(star.name.value, Kind.CONTAINER)

    def _build_class_attributes(self, cls: cst.ClassDef) -> None:
        """`self.x = ...` in any method binds `self.x` in the class scope."""
        body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else []
        for method in body:
            if not isinstance(method, cst.FunctionDef):
                continue
            mscope = self.semantics.scope_for(method, self)
            for stmt in iter_statements(method.body.body if isinstance(method.body, cst.IndentedBlock) else []):
                for small in small_statements(stmt):
                    if isinstance(small, (cst.Assign, cst.AnnAssign)):
                        targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
                        if small.value is None:
                            continue
                        kind = self.semantics.infer(small.value, mscope)
                        for t in targets:
                            name = dotted(t)
                            if name and name.startswith("self.") and name.count(".") == 1:
                                self._bind(name, kind)


def _iterates_loader(expr: cst.BaseExpression, scope: Scope) -> bool:
    """`enumerate(loader)`, `tqdm(loader)`, `zip(a_loader, b_loader)`."""
    if isinstance(expr, cst.Call) and expr.args:
        inner = expr.args[0].value
        return bool(scope.semantics.infer(inner, scope) & Kind.DATALOADER) or _iterates_loader(inner, scope)
    return False


class Semantics:
    def __init__(
        self,
        module: cst.Module,
        imports: Imports,
        text: str = "backward",
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
        self.mentions_backward = "backward" in text
        self._summary = summary
        self._scopes: dict[cst.CSTNode, Scope] = {}
        self.sites = sites or cache(lambda: call_sites.index(module))
        self.scopes = scopes
        self._backward_calls: dict[int, list[cst.Call]] | None = None
        self._resolving: set[cst.CSTNode] = set()

    @cached_property
    def classes(self) -> ModuleClasses:
        """The file's classes' kinds: made at the first question (their bases are read across the project)."""
        return ModuleClasses(self.module, self._summary, self.project, self.folder)

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
        inner = Scope(comp, scope, self)
        bindings: dict[str, Kind] = {}
        inner._bindings = bindings
        clause: cst.CompFor | None = comp.for_in
        while clause is not None:
            kind = Kind.NONE
            it = clause.iter
            if isinstance(it, cst.Call) and isinstance(it.func, cst.Attribute) and it.func.attr.value == "parameters":
                if self.infer(it.func.value, scope) & Kind.MODEL:
                    kind = Kind.TENSOR
            else:
                kind = self.element_kind(it, inner)
            for t, _ in _targets(clause.target):
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
            if func.value in ("float", "int", "len"):
                return Kind.NUMBER
            if func.value in _BUILTIN_CONTAINERS:
                return Kind.CONTAINER
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            receiver = self.infer(func.value, scope)
            if method in _NUMBER_METHODS:
                return Kind.NUMBER
            if method in ("detach",):
                return Kind.TENSOR
            if receiver & Kind.MODEL and method in SAME_OBJECT_METHODS:
                return receiver
            if receiver & (Kind.TENSOR | Kind.LOSS) and method in TENSOR_METHODS:
                return receiver & (Kind.TENSOR | Kind.LOSS)
            if method in ("prepare", "setup") and call.args and receiver & Kind.ACCELERATOR:
                return self.infer(call.args[0].value, scope)
            if method in ("state_dict", "named_parameters", "items") and receiver & Kind.MODEL:
                return Kind.CONTAINER
            if method == "state_dict" and receiver & (Kind.OPTIMIZER | Kind.SCHEDULER | Kind.SCALER):
                return Kind.CONTAINER
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
        cls = self.classes.by_name.get(name)
        if cls is not None:
            return self.classes.kind(cls)
        defs = self.functions().get(name)
        if defs and len(defs) == 1:
            return self.returns(*defs[0])
        return None

    def _method_returns(self, method: str, scope: Scope) -> Kind | None:
        cls_scope = scope.class_scope()
        if cls_scope is None:
            return None
        for fn, chain in self.functions().get(method, ()):
            if chain and chain[-1] is cls_scope.node:
                return self.returns(fn, chain)
        return None

    def backward_calls(self, owner: cst.CSTNode) -> list[cst.Call]:
        """`x.backward(...)` / `x.manual_backward(...)` calls directly in the scope of `owner` (not in
        its nested functions, classes or lambdas), in source order."""
        if self._backward_calls is None:
            by_owner: dict[int, list[cst.Call]] = {}
            for site in self.sites().calls if self.mentions_backward else ():
                func = site.call.func
                if type(func) is cst.Attribute and func.attr.value in ("backward", "manual_backward"):
                    if not site.in_lambda:
                        by_owner.setdefault(id(site.chain[-1] if site.chain else self.module), []).append(site.call)
            self._backward_calls = by_owner
        return self._backward_calls.get(id(owner), [])

    def functions(self) -> dict[str, list[tuple[cst.FunctionDef, tuple[cst.CSTNode, ...]]]]:
        """Every function and method of the file by name, with its enclosing scopes."""
        return self.sites().functions

    def scope_of_chain(self, chain: tuple[cst.CSTNode, ...]) -> Scope:
        scope = self.scope_for(self.module, None)
        for node in chain:
            scope = self.scope_for(node, scope)
        return scope

    def returns(self, fn: cst.FunctionDef, chain: tuple[cst.CSTNode, ...]) -> Kind:
        """The kind every `return` of `fn` agrees on (NONE when they differ or none returns a value)."""
        if fn in self._resolving:
            return Kind.NONE
        self._resolving.add(fn)
        try:
            scope = self.scope_of_chain((*chain, fn))
            kinds = [
                self.infer(small.value, scope)
                for stmt in iter_statements(block_statements(fn.body))
                for small in small_statements(stmt)
                if type(small) is cst.Return and small.value is not None
            ]
        finally:
            self._resolving.discard(fn)
        return agree(kinds)

    def param_kind(self, scope: Scope, param: cst.Param) -> Kind:
        """What every call site in the file passes for `param` (NONE without a call site)."""
        fn = scope.node
        if not isinstance(fn, cst.FunctionDef) or fn in self._resolving:
            return Kind.NONE
        self._resolving.add(fn)
        try:
            return agree([self.infer(arg, caller) for arg, caller in self._arguments(fn, scope, param)])
        finally:
            self._resolving.discard(fn)

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
        for site in self.sites().by_key.get(key, ()):
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
