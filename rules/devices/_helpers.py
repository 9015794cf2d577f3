"""What more than one device rule needs."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from torchlint.engine.core.callargs import string_value
from torchlint.engine.semantic.kinds import Kind
from torchlint.engine.semantic.values import current_where

if TYPE_CHECKING:
    from torchlint.engine.context import FileContext


DEVICE_TYPES = ("cpu", "cuda", "mps", "xpu", "meta", "hpu", "npu")


def is_device(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    """Evidence that `expr` is a device: a device string, `torch.device(...)`, `x.device`, or a name
    the shared analysis knows holds a device (never its name: `.to(d)` may take a tensor or a dtype)."""
    text = string_value(expr)
    if text is not None:
        return text.split(":")[0] in DEVICE_TYPES
    if isinstance(expr, cst.Attribute) and expr.attr.value == "device":
        return True
    if isinstance(expr, cst.Call) and ctx.qualname(expr.func) == "torch.device":
        return True
    return bool(ctx.kind(expr) & Kind.DEVICE)


def proven_torch_device(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    """`expr` holds a `torch.device` object (not a string): built by `torch.device(...)` at the
    assignment that reaches this use, or a tensor's `.device`. Unknown (a parameter, `args.device`,
    a name reassigned under a branch) is False."""
    if isinstance(expr, cst.Attribute) and expr.attr.value == "device":
        return bool(ctx.kind(expr.value) & Kind.TENSOR)
    if isinstance(expr, cst.Call):
        return ctx.qualname(expr.func) == "torch.device"
    if not isinstance(expr, (cst.Name, cst.Attribute)):
        return False
    built = ctx.values.builder(expr, current_where(ctx))
    return built is not None and ctx.qualname(built[0].func) == "torch.device"
