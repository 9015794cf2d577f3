"""TL801 log-one-plus-x: torch.log(1 + x) instead of torch.log1p(x)"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.rule import SAFE, Invalid, Replace, Rule, fix
from torchlint.findings import Severity

from ._helpers import is_one, torch_call


def _one_plus(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """`x` for `1 + x` / `x + 1`, else None."""
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
        if is_one(expr.left):
            return expr.right
        if is_one(expr.right):
            return expr.left
    return None


class LogOnePlus(Rule):
    code = "TL801"
    requires = ("log",)
    name = "log-one-plus-x"
    message = "`torch.log(1 + x)` loses precision for small `x`; use `torch.log1p(x)`"
    severity = Severity.INFO
    category = "correctness"
    opt_in = (
        "Measured on 94 public repositories it was not tuned on (bench/realworld), 0 of its 3 findings were "
        "right (3 debatable): float32 `log(1 + x)` in a softplus-like term and a loss term, where the "
        "absolute error (~1e-7) never matters next to the terms around it. Select it for half precision, or "
        "for values near 0 whose relative error matters."
    )
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
        if not torch_call(self.ctx, node, "log"):
            return
        inner = _one_plus(node.args[0].value)
        if inner is None:
            return
        new = node.with_changes(
            func=node.func.with_changes(attr=cst.Name("log1p")) if isinstance(node.func, cst.Attribute) else node.func,
            args=[node.args[0].with_changes(value=inner)],
        )
        edit = (
            fix("Use `torch.log1p`", Replace(node, new), applicability=SAFE)
            if isinstance(node.func, cst.Attribute)
            else None
        )
        self.report(node, fix=edit)
