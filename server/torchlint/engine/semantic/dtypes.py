"""Whether a tensor expression is proven to hold integers (or bools), and why.

Losses that need floating targets (binary cross-entropy) raise on an integer one,
and integers are what label code naturally builds: `torch.full((n,), 1)`,
`torch.tensor([0, 1])`, `torch.randint(...)`, `labels.long()`. The evidence is the
call that made the value: an integer `dtype=`, an integer cast (`.long()`,
`.to(torch.int64)`), a factory whose default dtype follows integer data, an
`argmax`. Names are followed with values.py; dtype-keeping methods (`.view`,
`.to(device)`, indexing) keep it. Anything else, including every float default
(`torch.ones(n)`), is not integer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from torchlint.engine.core.callargs import get_arg, has_star, string_value
from torchlint.engine.semantic.kinds import FLOAT_CASTS, INTEGER_CASTS, INTEGER_DTYPES, INTEGER_TENSOR_CLASSES, Kind
from torchlint.engine.semantic.values import Where

if TYPE_CHECKING:
    from torchlint.engine.context import FileContext

_KEEP_DTYPE = frozenset(
    "view reshape squeeze unsqueeze flatten contiguous clone detach permute transpose cpu cuda expand repeat".split()
)
_INDEX_METHODS = frozenset({"argmax", "argmin", "argsort"})
_DEPTH = 10


def integer_dtype(ctx: FileContext, expr: cst.BaseExpression, where: Where, depth: int = 0) -> str | None:
    """The integer dtype `expr` is proven to have ("torch.int64", ...), else None."""
    if depth > _DEPTH:
        return None
    if isinstance(expr, cst.Name):
        found = ctx.values.value_of(expr, where)
        return integer_dtype(ctx, found[0], found[1], depth + 1) if found is not None else None
    if isinstance(expr, cst.Subscript):
        return integer_dtype(ctx, expr.value, where, depth + 1)
    if not isinstance(expr, cst.Call) or has_star(expr):
        return None
    q = ctx.qualname(expr.func)
    if q is not None:
        return _factory(ctx, q, expr, where)
    func = expr.func
    if not isinstance(func, cst.Attribute):
        return None
    method, receiver = func.attr.value, func.value
    if method in INTEGER_CASTS and not expr.args:
        return INTEGER_CASTS[method]
    if method in FLOAT_CASTS:
        return None
    if method in _INDEX_METHODS:
        return "torch.int64"
    if method in ("to", "type"):
        dtype = get_arg(expr, "dtype", 0)
        named = _named_dtype(ctx, dtype.value) if dtype is not None else None
        if named is not None or not _device_only(ctx, expr):
            return named
        return integer_dtype(ctx, receiver, where, depth + 1)
    if method in _KEEP_DTYPE:
        return integer_dtype(ctx, receiver, where, depth + 1)
    return None


def _factory(ctx: FileContext, q: str, call: cst.Call, where: Where) -> str | None:
    """The integer dtype a torch factory call gives its result."""
    if q in INTEGER_TENSOR_CLASSES:
        return INTEGER_TENSOR_CLASSES[q]
    head, _, last = q.rpartition(".")
    if head != "torch":
        return None
    dtype = get_arg(call, "dtype")
    if dtype is not None:
        return _named_dtype(ctx, dtype.value)
    if last in ("randint", "randperm"):
        return "torch.int64"
    if last == "full":
        fill = get_arg(call, "fill_value", 1)
        value = fill.value if fill is not None else None
        if isinstance(value, cst.Name) and value.value not in (
            "True",
            "False",
        ):  # `real_label = 1` ... `torch.full((b,), real_label)`
            found = ctx.values.value_of(value, where)
            value = found[0] if found is not None else None
        return _literal_dtype(value) if value is not None else None
    if last in ("tensor", "as_tensor", "arange"):
        data = [a.value for a in call.args if a.keyword is None]
        kinds = {_literal_dtype(d) for d in data[: 1 if last != "arange" else 3]}
        return kinds.pop() if len(kinds) == 1 else None
    return None


def _named_dtype(ctx: FileContext, expr: cst.BaseExpression) -> str | None:
    """`torch.long`, `torch.int32`, `torch.LongTensor` (as `.type()` takes it): the integer dtype named."""
    q = ctx.qualname(expr) or ""
    return INTEGER_DTYPES.get(q) or INTEGER_TENSOR_CLASSES.get(q)


def _literal_dtype(expr: cst.BaseExpression) -> str | None:
    """torch's dtype for literal data: int64 for integers, bool for True/False (nested lists of one kind)."""
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        expr = expr.expression
    if isinstance(expr, cst.Integer):
        return "torch.int64"
    if isinstance(expr, cst.Name) and expr.value in ("True", "False"):
        return "torch.bool"
    if isinstance(expr, (cst.List, cst.Tuple)) and expr.elements:
        kinds = {
            _literal_dtype(e.value) if isinstance(e, cst.Element) and not isinstance(e, cst.StarredElement) else None
            for e in expr.elements
        }
        return kinds.pop() if len(kinds) == 1 else None
    return None


def _device_only(ctx: FileContext, call: cst.Call) -> bool:
    """`.to(...)` that moves without changing the dtype: a device string, `torch.device`, `x.device`."""
    if any(a.keyword is not None and a.keyword.value not in ("device", "non_blocking", "copy") for a in call.args):
        return False
    positional = [a.value for a in call.args if a.keyword is None]
    if not positional:
        return bool(call.args)
    first = positional[0]
    if string_value(first) is not None or (isinstance(first, cst.Attribute) and first.attr.value == "device"):
        return True
    if isinstance(first, cst.Call) and ctx.qualname(first.func) == "torch.device":
        return True
    return bool(ctx.kind(first) & Kind.DEVICE)
