"""Numerical-accuracy rules (TL8xx): formulas with a dedicated, more accurate torch function."""

from __future__ import annotations

import libcst as cst

from torchlint.engine.rule import Invalid, Replace, Rule, fix
from torchlint.findings import Severity


def _is_one(expr: cst.BaseExpression) -> bool:
    return (isinstance(expr, cst.Integer) and expr.value == "1") or (
        isinstance(expr, cst.Float) and expr.evaluated_value == 1.0
    )


def _one_plus(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """`x` for `1 + x` / `x + 1`, else None."""
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
        if _is_one(expr.left):
            return expr.right
        if _is_one(expr.right):
            return expr.left
    return None


def _torch_call(ctx, node: cst.Call, name: str) -> bool:
    return ctx.qualname(node.func) == f"torch.{name}" and len(node.args) == 1 and node.args[0].keyword is None


class LogOnePlus(Rule):
    code = "TL801"
    requires = ("log",)
    name = "log-one-plus-x"
    message = "`torch.log(1 + x)` loses precision for small `x`; use `torch.log1p(x)`"
    severity = Severity.INFO
    summary = "torch.log(1 + x) instead of torch.log1p(x)"
    what = "Flags `torch.log(1 + x)` and `torch.log(x + 1)` (TorchFix TOR106)."
    why = (
        "For |x| much smaller than 1, `1 + x` rounds away most of `x`'s digits before the logarithm is "
        "taken (in float32, `1 + 1e-8 == 1`), so the result is 0 or badly wrong. `log1p` computes it "
        "without forming `1 + x`."
    )
    example = "import torch\n\ny = torch.log(1 + x)\n"
    fix_example = "import torch\n\ny = torch.log1p(x)\n"
    fix_safety = "Safe: the same function, computed more accurately."
    VALID = [
        "import torch\ny = torch.log1p(x)\n",
        "import torch\ny = torch.log(2 + x)\n",
        "import math\ny = math.log(1 + x)\n",
    ]
    INVALID = [
        Invalid("import torch\ny = torch.log(p + 1.0)\n", line=2, fixed="import torch\ny = torch.log1p(p)\n"),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        if not _torch_call(self.ctx, node, "log"):
            return
        inner = _one_plus(node.args[0].value)
        if inner is None:
            return
        new = node.with_changes(
            func=node.func.with_changes(attr=cst.Name("log1p")) if isinstance(node.func, cst.Attribute) else node.func,
            args=[node.args[0].with_changes(value=inner)],
        )
        edit = fix("Use `torch.log1p`", Replace(node, new)) if isinstance(node.func, cst.Attribute) else None
        self.report(node, fix=edit)


class ExpMinusOne(Rule):
    code = "TL802"
    requires = ("exp",)
    name = "exp-minus-one"
    message = "`torch.exp(x) - 1` loses precision for small `x`; use `torch.expm1(x)`"
    severity = Severity.INFO
    summary = "torch.exp(x) - 1 instead of torch.expm1(x)"
    what = "Flags `torch.exp(x) - 1` (TorchFix TOR107)."
    why = (
        "For small x, `exp(x)` is close to 1 and subtracting 1 cancels most significant digits "
        "(catastrophic cancellation). `expm1` computes the difference directly."
    )
    example = "import torch\n\ny = torch.exp(x) - 1\n"
    fix_example = "import torch\n\ny = torch.expm1(x)\n"
    fix_safety = "Safe: the same function, computed more accurately."
    VALID = [
        "import torch\ny = torch.expm1(x)\n",
        "import torch\ny = torch.exp(x) - 2\n",
        "import torch\ny = 1 - torch.exp(x)\n",
    ]
    INVALID = [
        Invalid("import torch\ny = torch.exp(-t) - 1.0\n", line=2, fixed="import torch\ny = torch.expm1(-t)\n"),
    ]

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if (
            not isinstance(node.operator, cst.Subtract)
            or not _is_one(node.right)
            or not isinstance(node.left, cst.Call)
        ):
            return
        call = node.left
        if not _torch_call(self.ctx, call, "exp"):
            return
        edit = None
        if isinstance(call.func, cst.Attribute):
            edit = fix(
                "Use `torch.expm1`",
                Replace(node, call.with_changes(func=call.func.with_changes(attr=cst.Name("expm1")))),
            )
        self.report(node, fix=edit)
