"""How many features the layer that produced a value outputs, when a `nn.Linear` proves it.

`cross_entropy` over one class is identically zero, so a rule must know whether a
loss's input came from `nn.Linear(d, 1)`. The value is followed as values.py
follows it (names, `self.` attributes, one call's arguments), through moves and
casts that keep the shape (`.to(device)`, `.float()`), into the module called: an
`nn.Linear` with a literal `out_features`, an `nn.Sequential` ending in one, or a
model class of this file whose every `forward` return is such a value. Anything
else (another library's model, a reshaped output, a tuple element) is unknown.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from torchlint.engine.core.callargs import get_arg, int_value
from torchlint.engine.core.walk import iter_nodes
from torchlint.engine.semantic.kinds import SAME_OBJECT_METHODS
from torchlint.engine.semantic.values import Where

if TYPE_CHECKING:
    from torchlint.engine.context import FileContext

_DEPTH = 12


@dataclass(frozen=True)
class Head:
    width: int  # the layer's out_features
    layer: cst.Call  # the `nn.Linear(...)` construction


def head_of(ctx: FileContext, expr: cst.BaseExpression, where: Where, depth: int = 0) -> Head | None:
    """The `nn.Linear` whose output `expr` is (None: unknown)."""
    if depth > _DEPTH:
        return None
    if isinstance(expr, (cst.Name, cst.Attribute)) and not _method_of(expr):
        found = ctx.values.value_of(expr, where)
        return head_of(ctx, found[0], found[1], depth + 1) if found is not None else None
    if not isinstance(expr, cst.Call) or any(a.star for a in expr.args):
        return None
    func = expr.func
    if isinstance(func, cst.Attribute) and func.attr.value in SAME_OBJECT_METHODS and not _is_self(func.value):
        return head_of(ctx, func.value, where, depth + 1)
    if _is_self(func) and where.cls is not None:
        return _forward_head(ctx, where.cls, depth + 1)
    built = ctx.values.builder(func, where)
    if built is None or built[0] is expr:
        return None
    return _layer_head(ctx, built[0], built[1], depth + 1)


def _layer_head(ctx: FileContext, built: cst.Call, where: Where, depth: int) -> Head | None:
    """The `nn.Linear` a module built by `built` applies last."""
    if depth > _DEPTH:
        return None
    q = ctx.qualname(built.func)
    if q == "torch.nn.Linear":
        out = get_arg(built, "out_features", 1)
        width = int_value(out.value) if out is not None else None
        return Head(width, built) if width is not None else None
    if q == "torch.nn.Sequential":
        layers = [a.value for a in built.args if a.keyword is None and not a.star]
        if not layers or len(layers) != len(built.args):
            return None
        last = ctx.values.builder(layers[-1], where)
        return _layer_head(ctx, last[0], last[1], depth + 1) if last is not None else None
    if isinstance(built.func, cst.Name):
        cls = next((c for c in ctx.semantics.classes.modules if c.name.value == built.func.value), None)
        return _forward_head(ctx, cls, depth + 1) if cls is not None else None
    return None


def _forward_head(ctx: FileContext, cls: cst.ClassDef, depth: int) -> Head | None:
    """The head every `return` of the class's `forward` outputs (None: they differ or one is unknown)."""
    body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ()
    forward = next((s for s in body if isinstance(s, cst.FunctionDef) and s.name.value == "forward"), None)
    if forward is None:
        return None
    returns = [n for n in iter_nodes(forward.body, into_functions=False) if isinstance(n, cst.Return)]
    heads = [head_of(ctx, r.value, Where(forward, cls), depth + 1) if r.value is not None else None for r in returns]
    if not heads or any(h is None for h in heads) or len({h.width for h in heads if h is not None}) != 1:
        return None
    return heads[0]


def _is_self(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "self"


def _method_of(expr: cst.BaseExpression) -> bool:
    """`x.shape`-like reads are not values the analysis follows (only names and `self.attr`)."""
    return isinstance(expr, cst.Attribute) and not _is_self(expr.value)
