"""TL802 exp-minus-one: torch.exp(x) - 1 instead of torch.expm1(x)"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.rule import SAFE, Invalid, Replace, Rule, fix
from torchlint.findings import Severity

from ._helpers import is_one, torch_call


class ExpMinusOne(Rule):
    code = "TL802"
    requires = ("exp",)
    name = "exp-minus-one"
    message = "`torch.exp(x) - 1` loses precision for small `x`; use `torch.expm1(x)`"
    severity = Severity.INFO
    category = "correctness"
    opt_in = (
        "Measured on 94 public repositories it was not tuned on (bench/realworld), 0 of its 3 findings were "
        "right (3 debatable): float32 `exp(x) - 1` in a hand-written activation (ELU) and a sampler, where "
        "the absolute error (~1e-7) never matters. Select it for half precision, or for values near 0 whose "
        "relative error matters."
    )
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
        if not isinstance(node.operator, cst.Subtract) or not is_one(node.right) or not isinstance(node.left, cst.Call):
            return
        call = node.left
        if not torch_call(self.ctx, call, "exp"):
            return
        edit = None
        if isinstance(call.func, cst.Attribute):
            edit = fix(
                "Use `torch.expm1`",
                Replace(node, call.with_changes(func=call.func.with_changes(attr=cst.Name("expm1")))),
                applicability=SAFE,
            )
        self.report(node, fix=edit)
