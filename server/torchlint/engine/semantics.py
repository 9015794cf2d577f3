"""Shared analyses: module classes, and what each name in a scope is bound to.

Flow-insensitive and deliberately light: for each scope we read its assignments
once (lazily, on first question) and infer a `Kind` for each target from the
assigned expression. Rules ask `ctx.kind(expr)`; none of them re-derives this.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import libcst as cst

from torchlint.engine.kinds import (
    Kind,
    kind_from_annotation,
    kind_from_name,
    kind_from_qualname,
)
from torchlint.engine.names import Imports, dotted
from torchlint.engine.walk import block_statements, iter_nodes, iter_statements, small_statements

_MODULE_BASES = ("torch.nn.", "lightning.pytorch.LightningModule")
_RETURNS_SELF = frozenset(
    {"to", "cuda", "cpu", "train", "eval", "half", "float", "double", "bfloat16", "requires_grad_"}
)
_TENSOR_METHODS_KEEP = frozenset(
    {
        "to",
        "cuda",
        "cpu",
        "float",
        "half",
        "double",
        "long",
        "int",
        "bool",
        "view",
        "reshape",
        "contiguous",
        "mean",
        "sum",
        "squeeze",
        "unsqueeze",
        "permute",
        "transpose",
        "clone",
        "detach",
        "flatten",
        "abs",
        "pow",
        "sqrt",
        "exp",
        "log",
        "softmax",
        "log_softmax",
    }
)
_NUMBER_METHODS = frozenset({"item", "tolist", "__float__"})


_FACTORY_VERBS = frozenset(
    "get build create make load compute init initialize setup prepare wrap convert find infer count estimate "
    "calculate calc check apply parse read configure instantiate new default".split()
)
_FACTORY_KINDS = Kind.MODEL | Kind.OPTIMIZER | Kind.SCHEDULER | Kind.DATALOADER | Kind.CRITERION


def is_factory_name(name: str) -> bool:
    """`get_model`, `build_optimizer`, `compute_module_sizes`: a function named by a verb, not a module."""
    head = name.lstrip("_").split("_", 1)[0].lower()
    return head in _FACTORY_VERBS and "_" in name.lstrip("_")


class ModuleClasses:
    """Which classes in the file are nn.Module subclasses."""

    def __init__(self, module: cst.Module, imports: Imports) -> None:
        self.by_name: dict[str, cst.ClassDef] = {}
        classes = [n for n in iter_statements(module.body, into_functions=True) if isinstance(n, cst.ClassDef)]
        for cls in classes:
            self.by_name[cls.name.value] = cls
        self.modules: set[cst.ClassDef] = set()
        changed = True
        while changed:  # fixpoint: subclasses of in-file module classes
            changed = False
            for cls in classes:
                if cls not in self.modules and self._is_module(cls, imports):
                    self.modules.add(cls)
                    changed = True

    def _is_module(self, cls: cst.ClassDef, imports: Imports) -> bool:
        for base in cls.bases:
            qualname = imports.qualname(base.value)
            if qualname is not None:
                if qualname.startswith(_MODULE_BASES) and qualname.rsplit(".", 1)[-1][:1].isupper():
                    return True
                # Imported from elsewhere (project code): a module if it has forward().
                if not qualname.startswith("torch.") and _defines(cls, "forward"):
                    return True
                continue
            name = dotted(base.value)
            if name in self.by_name and self.by_name[name] in self.modules:
                return True
        return False

    def __contains__(self, cls: cst.ClassDef) -> bool:
        return cls in self.modules


def _defines(cls: cst.ClassDef, method: str) -> bool:
    return (
        any(isinstance(s, cst.FunctionDef) and s.name.value == method for s in cls.body.body)
        if isinstance(cls.body, cst.IndentedBlock)
        else False
    )


def _targets(target: cst.BaseExpression) -> Iterator[tuple[cst.BaseExpression, int | None]]:
    """(target, position) pairs of an assignment target; position None = whole value."""
    if isinstance(target, (cst.Tuple, cst.List)):
        for i, el in enumerate(target.elements):
            if isinstance(el, cst.Element):
                yield el.value, i
    else:
        yield target, None


ScopeNode = cst.Module | cst.ClassDef | cst.FunctionDef | cst.GeneratorExp | cst.ListComp


class Scope:
    """A module, class or function body (or a comprehension) and the kinds of the names bound in it."""

    def __init__(self, node: ScopeNode, parent: Scope | None, semantics: Semantics) -> None:
        self.node = node
        self.parent = parent
        self.semantics = semantics
        self._bindings: dict[str, Kind] | None = None

    # -- lookup -----------------------------------------------------------
    @property
    def bindings(self) -> dict[str, Kind]:
        if self._bindings is None:
            self._bindings = {}
            self._build()
        return self._bindings

    def lookup(self, name: str) -> Kind | None:
        scope: Scope | None = self
        while scope is not None:
            if not isinstance(scope.node, cst.ClassDef) or scope is self:
                kind = scope.bindings.get(name)
                if kind is not None:
                    return kind
            scope = scope.parent
        return None

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
        if kind:
            bindings = self.bindings
            bindings[name] = bindings.get(name, Kind.NONE) | kind

    def _build(self) -> None:
        if isinstance(self.node, cst.FunctionDef):
            self._bind_params(self.node.params)
        if isinstance(self.node, cst.ClassDef):
            self._build_class_attributes(self.node)
            return
        for stmt in iter_statements(self._body()):
            if isinstance(stmt, cst.For):
                self._bind_for(stmt)
            elif isinstance(stmt, (cst.With,)):
                for item in stmt.items:
                    if item.asname is not None:
                        for target, _ in _targets(item.asname.name):
                            self._assign(target, self.semantics.infer(item.item, self))
            for small in small_statements(stmt):
                if isinstance(small, cst.Assign):
                    for assign_target in small.targets:
                        self._assign_value(assign_target.target, small.value)
                elif isinstance(small, cst.AnnAssign):
                    kind = kind_from_annotation(self.semantics.imports.qualname(small.annotation.annotation))
                    if small.value is not None:
                        kind |= self.semantics.infer(small.value, self)
                    self._assign(small.target, kind)
        # usage: anything we call .backward() on is a loss (a scan of the scope: only if it can match)
        for node in iter_nodes(self.node, into_functions=False) if self.semantics.mentions_backward else ():
            if (
                isinstance(node, cst.Call)
                and isinstance(node.func, cst.Attribute)
                and node.func.attr.value == "backward"
                and isinstance(node.func.value, cst.Name)
                and all(a.keyword is not None for a in node.args)
            ):
                self._bind(node.func.value.value, Kind.LOSS)
            elif (  # accelerator.backward(loss) / self.manual_backward(loss)
                isinstance(node, cst.Call)
                and isinstance(node.func, cst.Attribute)
                and (
                    node.func.attr.value == "manual_backward"
                    or node.func.attr.value == "backward"
                    and dotted(node.func.value) in ("accelerator", "self.accelerator", "fabric", "self.fabric")
                )
                and node.args
                and isinstance(node.args[0].value, cst.Name)
            ):
                self._bind(node.args[0].value.value, Kind.LOSS)

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

    def _bind_for(self, stmt: cst.For) -> None:
        iterated = self.semantics.infer(stmt.iter, self)
        if iterated & Kind.DATALOADER or _iterates_loader(stmt.iter, self):
            for t, _ in _targets(stmt.target):
                for inner, _ in _targets(t):
                    if isinstance(inner, cst.Name):
                        self._bind(inner.value, Kind.BATCH)

    def _bind_params(self, params: cst.Parameters) -> None:
        for p in (*params.posonly_params, *params.params, *params.kwonly_params):
            kind = Kind.NONE
            if p.annotation is not None:
                kind = kind_from_annotation(self.semantics.imports.qualname(p.annotation.annotation))
            if not kind:
                kind = kind_from_name(p.name.value) & ~(Kind.LOSS | Kind.DEVICE)
            self._bind(p.name.value, kind)

    def _build_class_attributes(self, cls: cst.ClassDef) -> None:
        """`self.x = ...` in any method binds `self.x` in the class scope."""
        body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else []
        for method in body:
            if not isinstance(method, cst.FunctionDef):
                continue
            method_scope = self.semantics.scope_for(method, self)
            for stmt in iter_statements(method.body.body if isinstance(method.body, cst.IndentedBlock) else []):
                for small in small_statements(stmt):
                    if isinstance(small, (cst.Assign, cst.AnnAssign)):
                        targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
                        if small.value is None:
                            continue
                        kind = self.semantics.infer(small.value, method_scope)
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
    def __init__(self, module: cst.Module, imports: Imports, text: str = "backward") -> None:
        self.module = module
        self.imports = imports
        self.mentions_backward = "backward" in text
        self.classes = ModuleClasses(module, imports)
        self._scopes: dict[cst.CSTNode, Scope] = {}

    def scope_for(self, node: ScopeNode, parent: Scope | None) -> Scope:
        scope = self._scopes.get(node)
        if scope is None:
            scope = self._scopes[node] = Scope(node, parent, self)
        return scope

    def infer(self, expr: cst.BaseExpression, scope: Scope) -> Kind:
        """Best-effort kind of the value of `expr` evaluated in `scope`."""
        if isinstance(expr, cst.Name):
            kind = scope.lookup(expr.value)
            if kind is not None:
                return kind
            return kind_from_name(expr.value) & ~Kind.LOSS
        if isinstance(expr, cst.Attribute):
            name = dotted(expr)
            if name and name.startswith("self.") and name.count(".") == 1:
                cls = scope.class_scope()
                if cls is not None and name in cls.bindings:
                    return cls.bindings[name]
                return kind_from_name(expr.attr.value) & ~Kind.LOSS
            if expr.attr.value == "module":  # ddp_model.module -> the bare model
                return self.infer(expr.value, scope) & Kind.MODEL
            if expr.attr.value == "loss" and self.infer(expr.value, scope) & Kind.TENSOR:
                return Kind.LOSS  # `model(**batch).loss` (Hugging Face outputs)
            return Kind.NONE
        if isinstance(expr, cst.Call):
            return self._infer_call(expr, scope)
        if isinstance(expr, cst.BinaryOperation):
            left, right = self.infer(expr.left, scope), self.infer(expr.right, scope)
            both = left | right
            if both & Kind.LOSS:
                return Kind.LOSS
            if both & Kind.TENSOR:
                return Kind.TENSOR
            return Kind.NUMBER if (left | right) & Kind.NUMBER else Kind.NONE
        if isinstance(expr, (cst.Integer, cst.Float)):
            return Kind.NUMBER
        if isinstance(expr, cst.Subscript):
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
            iterated = clause.iter
            if (
                isinstance(iterated, cst.Call)
                and isinstance(iterated.func, cst.Attribute)
                and iterated.func.attr.value == "parameters"
            ):
                if self.infer(iterated.func.value, scope) & Kind.MODEL:
                    kind = Kind.TENSOR
            else:
                kind = self.element_kind(iterated, inner)
            for t, _ in _targets(clause.target):
                if isinstance(t, cst.Name):
                    bindings[t.value] = kind
            clause = clause.inner_for_in
        return inner

    def _list_elements(self, name: str, scope: Scope) -> Kind:
        """`xs = []` then `xs.append(v)` / `xs = [v for ...]`: the kind of every v, if all agree."""
        kinds = []
        for node in iter_nodes(scope.node, into_functions=False):
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
        qualname = self.imports.qualname(call.func)
        if qualname is not None:
            kind = kind_from_qualname(qualname)
            if kind:
                return kind
        func = call.func
        if isinstance(func, cst.Name) and func.value in self.classes.by_name:
            return Kind.MODEL if self.classes.by_name[func.value] in self.classes else Kind.NONE
        if isinstance(func, cst.Name) and func.value in ("float", "int"):
            return Kind.NUMBER
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            receiver = self.infer(func.value, scope)
            if method in _NUMBER_METHODS:
                return Kind.NUMBER
            if method in ("detach",):
                return Kind.TENSOR
            if receiver & Kind.MODEL and method in _RETURNS_SELF:
                return receiver
            if receiver & (Kind.TENSOR | Kind.LOSS) and method in _TENSOR_METHODS_KEEP:
                return receiver & (Kind.TENSOR | Kind.LOSS)
            if method == "prepare" and call.args and receiver & Kind.ACCELERATOR:
                return self.infer(call.args[0].value, scope)
        name = dotted(func)
        if name is not None and is_factory_name(name.rpartition(".")[2]):
            # build_model(cfg) returns a model; compute_module_sizes(m) is not a forward pass
            return kind_from_name(name.rpartition("_")[2]) & _FACTORY_KINDS
        callee = self.infer(func, scope)
        if callee & Kind.CRITERION:
            return Kind.LOSS
        if callee & Kind.MODEL:
            return Kind.TENSOR
        return Kind.NONE


def _common(kinds: list[Kind]) -> Kind:
    """TENSOR when every kind is a tensor or loss (and none a number); else NONE."""
    if kinds and all(k & (Kind.TENSOR | Kind.LOSS) and not k & Kind.NUMBER for k in kinds):
        return Kind.TENSOR
    return Kind.NONE
