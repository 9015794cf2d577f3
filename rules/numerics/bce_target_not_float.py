"""TL806 bce-target-not-float: binary cross-entropy given an integer or bool target"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.core.callargs import get_arg, has_star
from torchlint.engine.rule import SAFE, Invalid, Replace, Rule, fix
from torchlint.engine.semantic.dtypes import integer_dtype
from torchlint.engine.semantic.kinds import INTEGER_CASTS, Kind
from torchlint.engine.semantic.values import current_where
from torchlint.findings import Severity

_FUNCTIONS = frozenset(
    {
        "torch.nn.functional.binary_cross_entropy",
        "torch.nn.functional.binary_cross_entropy_with_logits",
        "torch.binary_cross_entropy_with_logits",
    }
)
_MODULES = frozenset({"torch.nn.BCELoss", "torch.nn.BCEWithLogitsLoss"})
_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript)


class BceTargetNotFloat(Rule):
    code = "TL806"
    analyses = frozenset({Analysis.CALL_SITES, Analysis.KINDS, Analysis.OWN_SUMMARY, Analysis.SCOPES, Analysis.VALUES})
    requires = ("binary_cross_entropy", "BCE")
    name = "bce-target-not-float"
    message = (
        "the binary cross-entropy target `{target}` is an integer tensor ({dtype}): binary cross-entropy takes "
        "targets of its input's float dtype and raises RuntimeError on this one — pass `.float()` targets"
    )
    severity = Severity.ERROR
    category = "correctness"
    summary = "BCELoss / binary_cross_entropy(_with_logits) given an integer target: RuntimeError"
    what = (
        "Flags `nn.BCELoss` / `nn.BCEWithLogitsLoss` calls and `F.binary_cross_entropy(_with_logits)` whose "
        "target is proven to hold integers or bools: built with an integer `dtype=`, cast with `.long()` / "
        "`.int()` / `.bool()` / `.to(torch.long)`, or made by a factory whose dtype follows integer data "
        "(`torch.full((n,), 1)`, `torch.tensor([0, 1])`, `torch.randint(...)`, `argmax`) — followed through "
        "names, indexing and device moves. `torch.ones(n)` and other float defaults are not flagged."
    )
    why = (
        "Unlike `cross_entropy`, whose targets are class indices, binary cross-entropy takes probabilities "
        "of the input's dtype: an integer target raises `RuntimeError: Found dtype Long but expected Float` "
        "(`BCELoss`) or `result type Float can't be cast to the desired output type Long` (`...WithLogits`) "
        "on the first step (checked on torch 2.13). `torch.full((n,), 1)` builds an int64 tensor because "
        "the fill value is an int, which is how GAN label code gets it wrong."
    )
    example = """\
import torch
from torch import nn

criterion = nn.BCEWithLogitsLoss()
real = torch.full((64,), 1)
loss = criterion(disc(images).view(-1), real)
"""
    fix_example = """\
import torch
from torch import nn

criterion = nn.BCEWithLogitsLoss()
real = torch.full((64,), 1)
loss = criterion(disc(images).view(-1), real.float())
"""
    fix_safety = (
        "Safe: the call raised before, and a float32 target holds the same 0/1 values (an integer cast in "
        "the argument itself, `labels.long()`, becomes `labels.float()`). A model run in float64 or float16 "
        "needs the target in that dtype instead."
    )
    VALID = [
        "import torch\nfrom torch import nn\nloss = nn.BCEWithLogitsLoss()(logits, torch.ones(8))\n",
        "import torch\nimport torch.nn.functional as F\nloss = F.binary_cross_entropy(p, torch.full((8,), 1.0))\n",
        "import torch\nimport torch.nn.functional as F\ny = labels.float()\nloss = F.binary_cross_entropy_with_logits(z, y)\n",
        # cross_entropy takes integer class indices
        "import torch\nimport torch.nn.functional as F\nloss = F.cross_entropy(z, torch.randint(0, 5, (8,)))\n",
        "import torch\nimport torch.nn.functional as F\nloss = F.binary_cross_entropy(p, labels)\n",
    ]
    INVALID = [
        Invalid(
            "import torch\nimport torch.nn.functional as F\nloss = F.binary_cross_entropy(p, labels.long())\n",
            line=3,
            fixed="import torch\nimport torch.nn.functional as F\nloss = F.binary_cross_entropy(p, labels.float())\n",
        ),
        Invalid(
            "import torch\nfrom torch import nn\nbce = nn.BCELoss()\n"
            "t = torch.ones(8, dtype=torch.long).to('cuda')\nloss = bce(p, target=t)\n",
            line=5,
            fixed="import torch\nfrom torch import nn\nbce = nn.BCELoss()\n"
            "t = torch.ones(8, dtype=torch.long).to('cuda')\nloss = bce(p, target=t.float())\n",
        ),
        Invalid(
            "import torch\nimport torch.nn.functional as F\nloss = F.binary_cross_entropy_with_logits(z, torch.tensor([0, 1]))\n",
            line=3,
            fixed="import torch\nimport torch.nn.functional as F\n"
            "loss = F.binary_cross_entropy_with_logits(z, torch.tensor([0, 1]).float())\n",
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        if has_star(node) or not self._is_bce(node):
            return
        target = get_arg(node, "target", 1)
        if target is None:
            return
        expr = target.value
        dtype = integer_dtype(self.ctx, expr, current_where(self.ctx))
        if dtype is None:
            return
        code = self.ctx.module.code_for_node(expr)
        func = expr.func if isinstance(expr, cst.Call) else None
        if (
            isinstance(expr, cst.Call)
            and isinstance(func, cst.Attribute)
            and func.attr.value in INTEGER_CASTS
            and not expr.args
        ):
            edit = Replace(func.attr, cst.Name("float"))
        else:
            edit = Replace(expr, f"{code}.float()" if isinstance(expr, _ATOMS) else f"({code}).float()")
        self.report(
            node,
            self.message.format(target=code, dtype=dtype),
            fix=fix("Pass a float target", edit, applicability=SAFE),
        )

    def _is_bce(self, call: cst.Call) -> bool:
        if self.ctx.qualname(call.func) in _FUNCTIONS:
            return True
        if not isinstance(call.func, cst.Call) and not self.ctx.kind(call.func) & Kind.CRITERION:
            return False
        built = self.ctx.values.builder(call.func, current_where(self.ctx))
        return built is not None and self.ctx.qualname(built[0].func) in _MODULES
