"""What more than one numerics rule needs."""

from __future__ import annotations

import libcst as cst


def is_one(expr: cst.BaseExpression) -> bool:
    return (isinstance(expr, cst.Integer) and expr.value == "1") or (
        isinstance(expr, cst.Float) and expr.evaluated_value == 1.0
    )


def torch_call(ctx, node: cst.Call, name: str) -> bool:
    return ctx.qualname(node.func) == f"torch.{name}" and len(node.args) == 1 and node.args[0].keyword is None
