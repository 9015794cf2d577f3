"""Which output activation produced a value, and which losses such values reach.

A value is a softmax's (log_softmax's, sigmoid's) output because a call proves it:
`F.softmax(x, 1)`, `torch.sigmoid(z)`, `x.softmax(-1)`, `nn.Softmax(1)(x)`, a call of
an attribute or name bound to `nn.Softmax(...)`, an `nn.Sequential` whose last layer
is one, a function or method whose every `return` is one, or a model whose `forward`
does — a class of this file, or of another project file (read as an `ast` summary,
see project.py). Names and parameters are followed with values.py; `a, b = model(x)`
takes element `b` of the tuple every `return` of `forward` builds; shape, dtype and
device changes (`.squeeze()`, `.float()`, `.to(device)`) keep the activation.
Anything else is unknown.

The losses: `F.cross_entropy` / `nn.CrossEntropyLoss`, `F.nll_loss` / `nn.NLLLoss`,
`F.binary_cross_entropy` / `nn.BCELoss`, called directly or through the name or
attribute the loss module was bound to. `LossFeeds.feeds` lists every loss call of the
file whose input is a known activation's output; rules pick the pairs that are wrong.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import libcst as cst

from torchlint.engine.core.callargs import get_arg, int_value
from torchlint.engine.core.walk import iter_nodes
from torchlint.engine.semantic.inference import symbol
from torchlint.engine.semantic.kinds import SAME_OBJECT_METHODS
from torchlint.engine.semantic.names import dotted
from torchlint.engine.semantic.project import ModuleSummary, Project, qualify
from torchlint.engine.semantic.values import Where, where_of

if TYPE_CHECKING:
    from torchlint.engine.context import FileContext

FUNCTIONS = {
    "torch.softmax": "softmax",
    "torch.nn.functional.softmax": "softmax",
    "torch.special.softmax": "softmax",
    "torch.log_softmax": "log_softmax",
    "torch.nn.functional.log_softmax": "log_softmax",
    "torch.special.log_softmax": "log_softmax",
    "torch.sigmoid": "sigmoid",
    "torch.nn.functional.sigmoid": "sigmoid",
    "torch.special.expit": "sigmoid",
}
MODULES = {"torch.nn.Softmax": "softmax", "torch.nn.LogSoftmax": "log_softmax", "torch.nn.Sigmoid": "sigmoid"}
_METHODS = frozenset({"softmax", "log_softmax", "sigmoid"})
# Tensor methods that keep the values (and so what produced them): shape, dtype and device changes.
_KEEP_VALUES = SAME_OBJECT_METHODS | {
    "view",
    "reshape",
    "squeeze",
    "unsqueeze",
    "contiguous",
    "flatten",
    "permute",
    "transpose",
    "clone",
    "detach",
}
LOSS_FUNCTIONS = {
    "torch.nn.functional.cross_entropy": "cross_entropy",
    "torch.nn.functional.nll_loss": "nll_loss",
    "torch.nn.functional.binary_cross_entropy": "binary_cross_entropy",
}
LOSS_MODULES = {
    "torch.nn.CrossEntropyLoss": "cross_entropy",
    "torch.nn.NLLLoss": "nll_loss",
    "torch.nn.BCELoss": "binary_cross_entropy",
}
_DEPTH = 12


@dataclass(frozen=True)
class Origin:
    """The activation a value came from: the node that applied it in this file, or a place elsewhere."""

    activation: str  # "softmax", "log_softmax" or "sigmoid"
    node: cst.CSTNode | None  # the call (or the `nn.Softmax()` layer) in this file; None: in another file
    elsewhere: str = ""  # "models.py:12" when in another project file


@dataclass(frozen=True)
class Feed:
    """A loss call whose input is an activation's output."""

    loss: str  # "cross_entropy", "nll_loss" or "binary_cross_entropy"
    call: cst.Call
    loss_name: str  # as the code spells the loss: `nn.CrossEntropyLoss`, `F.nll_loss`
    argument: cst.BaseExpression  # the input argument
    origin: Origin


class LossFeeds:
    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.imports = ctx.imports
        self.values = ctx.values
        self.classes = {c.name.value: c for c in ctx.semantics.classes.modules}
        functions = ctx.semantics.functions()
        self.functions = {name: defs[0][0] for name, defs in functions.items() if len(defs) == 1 and not defs[0][1]}
        # names and `self.` attributes some assignment binds to a loss module: the only callees worth following
        self.loss_names = {
            dotted(t.target)
            for n in ctx.call_sites.assigns
            if isinstance(n.value, cst.Call) and self.imports.qualname(n.value.func) in LOSS_MODULES
            for t in n.targets
        }

    def feeds(self) -> list[Feed]:
        return [
            feed for site in self.ctx.call_sites.calls if (feed := self._feed(site.call, where_of(site))) is not None
        ]

    def _feed(self, call: cst.Call, where: Where) -> Feed | None:
        q = self.imports.qualname(call.func)
        loss = LOSS_FUNCTIONS.get(q or "")
        name = dotted(call.func) or ""
        if loss is None:
            if not isinstance(call.func, cst.Call) and name not in self.loss_names:
                return None
            built = self.values.builder(call.func, where)
            if built is None:
                return None
            loss = LOSS_MODULES.get(self.imports.qualname(built[0].func) or "")
            name = dotted(built[0].func) or ""
        arg = get_arg(call, "input", 0)
        if loss is None or arg is None:
            return None
        origin = self.origin(arg.value, where)
        return Feed(loss, call, name, arg.value, origin) if origin is not None else None

    # -- what produced a value ----------------------------------------------------------------
    def origin(
        self, expr: cst.BaseExpression, where: Where, depth: int = 0, element: int | None = None
    ) -> Origin | None:
        """The activation that produced `expr` (with `element`: produced element `element` of the tuple
        `expr` evaluates to, as `a, b = model(x)` unpacks it)."""
        if depth > _DEPTH:
            return None
        if isinstance(expr, (cst.Name, cst.Attribute)):
            found = self.values.value_of(expr, where)
            return self.origin(found[0], found[1], depth + 1, element) if found is not None else None
        if isinstance(expr, cst.Tuple) and element is not None:
            items = expr.elements
            ok = element < len(items) and not any(isinstance(e, cst.StarredElement) for e in items)
            return self.origin(items[element].value, where, depth + 1) if ok else None
        index = _int_index(expr)
        if index is not None and element is None and isinstance(expr, cst.Subscript):
            return self.origin(expr.value, where, depth + 1, index)
        if not isinstance(expr, cst.Call):
            return None
        func = expr.func
        q = self.imports.qualname(func)
        if element is not None:  # only a function, method or model returns a tuple of activations
            q = None
        elif q in FUNCTIONS:
            return Origin(FUNCTIONS[q], expr)
        if isinstance(func, cst.Attribute) and q is None and not _is_self(func.value) and element is None:
            if func.attr.value in _METHODS and _dim_like(expr):
                return Origin(func.attr.value, expr)
            if func.attr.value in _KEEP_VALUES:
                return self.origin(func.value, where, depth + 1)
        if isinstance(func, cst.Name) and func.value in self.functions and self.values.value_of(func, where) is None:
            fn = self.functions[func.value]
            return self._returns(fn, Where(fn), depth, element)
        if _is_self(func) and where.cls is not None and where.cls in self.classes.values():
            forward = _method(where.cls, "forward")  # `self(x)` in a LightningModule's training_step
            return self._returns(forward, Where(forward, where.cls), depth, element) if forward is not None else None
        if isinstance(func, cst.Attribute) and _is_self(func.value) and where.cls is not None:
            method = _method(where.cls, func.attr.value)
            if method is not None:
                return self._returns(method, Where(method, where.cls), depth, element)
        built = self.values.builder(func, where)
        if built is None or built[0] is expr:
            return None
        layer = self._layer(built[0], built[1], depth + 1, element)
        if layer is None:
            return None
        # `self.softmax(x)` / `nn.Softmax(1)(x)`: reported where applied; a model's: where its forward applies it
        return Origin(layer.activation, expr) if layer.node is built[0] else layer

    def _layer(self, built: cst.Call, where: Where, depth: int, element: int | None = None) -> Origin | None:
        """The activation a module built by `built` applies last (None: unknown or none)."""
        if depth > _DEPTH:
            return None
        if element is not None:
            cls = self.classes.get(built.func.value) if isinstance(built.func, cst.Name) else None
            forward = _method(cls, "forward") if cls is not None else None
            return self._returns(forward, Where(forward, cls), depth, element) if forward is not None else None
        q = self.imports.qualname(built.func)
        if q in MODULES:
            return Origin(MODULES[q], built)
        if q == "torch.nn.Sequential":
            layers = [a.value for a in built.args if a.keyword is None and not a.star]
            if not layers or len(layers) != len(built.args):
                return None
            last = self.values.builder(layers[-1], where)
            return self._layer(last[0], last[1], depth + 1) if last is not None else None
        if isinstance(built.func, cst.Name) and built.func.value in self.classes:
            cls = self.classes[built.func.value]
            forward = _method(cls, "forward")
            return self._returns(forward, Where(forward, cls), depth) if forward is not None else None
        project = self.ctx.project
        found = self.ctx.semantics.definition(built.func) if q is not None and project is not None else None
        if project is not None and found is not None and found[1] in found[0].class_defs:
            return ProjectActivations(project).of_class(found[0], found[1], depth + 1)
        return None

    def _returns(self, fn: cst.FunctionDef, where: Where, depth: int, element: int | None = None) -> Origin | None:
        """The activation every `return` of `fn` applies (None: they differ, or one is unknown)."""
        returns = [n for n in iter_nodes(fn.body, into_functions=False) if isinstance(n, cst.Return)]
        origins = [self.origin(r.value, where, depth + 1, element) if r.value is not None else None for r in returns]
        if not origins or any(o is None for o in origins):
            return None
        if len({o.activation for o in origins if o is not None}) != 1:
            return None
        return origins[0]


class ProjectActivations:
    """The same question for a class of another project file, on its `ast` summary.

    A smaller evaluator than the in-file one: `forward` returns an activation call, a
    name whose one top-level assignment before the `return` is one, or a call of a
    `self.` layer built as an activation module, an `nn.Sequential` ending in one, or
    another project model whose `forward` does.
    """

    def __init__(self, project: Project) -> None:
        self.project = project

    def of_class(self, summary: ModuleSummary, name: str, depth: int) -> Origin | None:
        cls = summary.class_defs[name]
        forward = next((s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "forward"), None)
        if forward is None or depth > _DEPTH:
            return None
        kinds = []
        for stmt in ast.walk(forward):
            if isinstance(stmt, ast.Return):
                if stmt.value is None or stmt not in forward.body:
                    return None  # a conditional return: unknown which one training sees
                kinds.append(self._value(summary, cls, forward, stmt.value, stmt, depth + 1))
        if not kinds or any(k is None for k in kinds) or len({k.activation for k in kinds if k}) != 1:
            return None
        return kinds[0]

    def _value(
        self, summary: ModuleSummary, cls: ast.ClassDef, fn: ast.FunctionDef, expr: ast.expr, at: ast.stmt, depth: int
    ) -> Origin | None:
        if depth > _DEPTH:
            return None
        if isinstance(expr, ast.Name):
            value = _last_assignment(fn, expr.id, at)
            return self._value(summary, cls, fn, value[0], value[1], depth + 1) if value else None
        if not isinstance(expr, ast.Call):
            return None
        q = qualify(summary, expr.func)
        where = f"{relative_path(summary.path, self.project.root)}:{expr.lineno}"
        if q in FUNCTIONS:
            return Origin(FUNCTIONS[q], None, where)
        func = expr.func
        if isinstance(func, ast.Attribute):
            receiver = func.value
            if isinstance(receiver, ast.Name) and receiver.id == "self":
                built = _self_attribute(cls, func.attr)
                return self._module(summary, built, depth + 1) if built is not None else None
            if func.attr in _METHODS and _ast_dim_like(expr):
                return Origin(func.attr, None, where)
            if func.attr in _KEEP_VALUES:
                return self._value(summary, cls, fn, receiver, at, depth + 1)
        if isinstance(func, ast.Call):
            return self._module(summary, func, depth + 1)
        return None

    def _module(self, summary: ModuleSummary, built: ast.expr, depth: int) -> Origin | None:
        if not isinstance(built, ast.Call) or depth > _DEPTH:
            return None
        q = qualify(summary, built.func)
        if q in MODULES:
            return Origin(MODULES[q], None, f"{relative_path(summary.path, self.project.root)}:{built.lineno}")
        if q == "torch.nn.Sequential":
            if not built.args or built.keywords or any(isinstance(a, ast.Starred) for a in built.args):
                return None
            return self._module(summary, built.args[-1], depth + 1)
        if isinstance(built.func, ast.Attribute) and built.func.attr in SAME_OBJECT_METHODS:
            return self._module(summary, built.func.value, depth + 1)
        found = symbol(self.project, summary, q) if q is not None else None
        if found is None or found[1] not in found[0].class_defs:
            return None
        return self.of_class(found[0], found[1], depth + 1)


def _is_self(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "self"


def _int_index(expr: cst.BaseExpression) -> int | None:
    """`i` of `value[i]` for a non-negative integer literal `i`."""
    if not isinstance(expr, cst.Subscript) or len(expr.slice) != 1 or not isinstance(expr.slice[0].slice, cst.Index):
        return None
    value = int_value(expr.slice[0].slice.value)
    return value if value is not None and value >= 0 else None


def _dim_like(call: cst.Call) -> bool:
    """`x.softmax(-1)`, `x.softmax(dim=1)`, `x.sigmoid()`: the tensor method's arguments, not a module's input."""
    if not call.args:
        return True
    first = call.args[0]
    return (first.keyword is not None and first.keyword.value == "dim") or int_value(first.value) is not None


def _ast_dim_like(call: ast.Call) -> bool:
    if not call.args:
        return not call.keywords or any(k.arg == "dim" for k in call.keywords)
    first = call.args[0]
    if isinstance(first, ast.UnaryOp) and isinstance(first.op, ast.USub):
        first = first.operand
    return isinstance(first, ast.Constant) and isinstance(first.value, int)


def _method(cls: cst.ClassDef, name: str) -> cst.FunctionDef | None:
    body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ()
    return next((s for s in body if isinstance(s, cst.FunctionDef) and s.name.value == name), None)


def _self_attribute(cls: ast.ClassDef, attr: str) -> ast.expr | None:
    """The one value any method assigns to `self.attr` (None: none, or several)."""
    values = [
        node.value
        for node in ast.walk(cls)
        if isinstance(node, ast.Assign)
        for t in node.targets
        if isinstance(t, ast.Attribute) and t.attr == attr and isinstance(t.value, ast.Name) and t.value.id == "self"
    ]
    return values[0] if len(values) == 1 else None


def _last_assignment(fn: ast.FunctionDef, name: str, at: ast.stmt) -> tuple[ast.expr, ast.stmt] | None:
    """The value the one reaching top-level `name = ...` before `at` assigns (None: unknown)."""
    found: tuple[ast.expr, ast.stmt] | None = None
    for stmt in fn.body:
        if stmt is at:
            return found
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            if stmt.targets[0].id == name:
                found = (stmt.value, stmt)
            continue
        if any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in ast.walk(stmt)):
            found = None  # bound under a condition, a loop or as a target: unknown
    return None


def relative_path(path: Path, root: Path) -> str:
    """`path` as messages name it: relative to the project root, else its file name."""
    try:
        return str(path.relative_to(root))
    except ValueError:
        return path.name
