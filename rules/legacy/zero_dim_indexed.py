"""TL708 zero-dim-indexed: `loss.data[0]` / `loss[0]` on a 0-dim tensor (PyTorch 0.3's way to read a loss)"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.rule import SAFE, UNSAFE, Invalid, Replace, Rule, fix
from torchlint.findings import Severity

from ._helpers import zero_dim_index


class ZeroDimIndexed(Rule):
    code = "TL708"
    analyses = frozenset(
        {Analysis.CALL_SITES, Analysis.GRAPH_BODIES, Analysis.KINDS, Analysis.OWN_SUMMARY, Analysis.SCOPES}
    )
    requires = ("[",)  # any integer index: `x.data[0]`, `x[ -1 ]`
    name = "zero-dim-indexed"
    message = "`{expr}` indexes a 0-dim tensor ({why}): IndexError since PyTorch 0.5; use `{recv}.item()`"
    severity = Severity.ERROR
    category = "correctness"
    summary = "`loss.data[0]` / `loss[0]` on a 0-dim tensor (a reduced loss)"
    what = (
        "Flags an integer index (`x.data[0]`, `x[0]`, `x[-1]`) on a tensor proven 0-dim: the output of a "
        "criterion module (`nn.CrossEntropyLoss()`, ...) or a functional loss (`F.mse_loss`, ...) whose "
        "`reduction` is the default or a literal `'mean'`/`'sum'`, a full reduction (`.mean()`, `.sum()`, "
        "`torch.mean(x)` with no `dim`), and sums, scalings and `.detach()`/`.cpu()` of those. Silent when "
        "the reduction is `'none'` or not a literal, or the criterion's construction is not in sight. "
        "Reported instead of TL703 at that spot."
    )
    why = (
        "Until PyTorch 0.4 a reduced loss was a 1-element tensor, and `loss.data[0]` read its value. Since 0.4 "
        "reductions return 0-dim tensors, and from 0.5 indexing one raises `IndexError: invalid index of a "
        "0-dim tensor. Use tensor.item()`."
    )
    example = """\
from torch import nn

criterion = nn.CrossEntropyLoss()
loss = criterion(model(x), y)
loss.backward()
print("loss", loss.data[0])
"""
    fix_example = """\
from torch import nn

criterion = nn.CrossEntropyLoss()
loss = criterion(model(x), y)
loss.backward()
print("loss", loss.item())
"""
    fix_safety = (
        "Safe for `x.data[0]`: it was a Python number in the PyTorch it was written for, and `x.item()` is one. "
        "Unsafe for `x[0]` (no `.data`): that was a tensor still in the graph; `x.item()` is a number, so a "
        "later `backward()` or tensor operation on it breaks — keep `x` itself there."
    )
    VALID = [
        "from torch import nn\ncriterion = nn.CrossEntropyLoss()\nloss = criterion(out, y)\nprint(loss.item())\n",
        # per-element losses keep their dimensions
        "from torch import nn\ncriterion = nn.MSELoss(reduction='none')\nloss = criterion(out, y)\nfirst = loss[0]\n",
        "import torch.nn.functional as F\nlosses = F.cross_entropy(out, y, reduction='none')\nprint(losses[0])\n",
        # a reduction over one dimension
        "import torch\nx = torch.randn(4, 3)\nrow_means = x.mean(1)\nprint(row_means[0])\n",
        # a criterion built elsewhere: its reduction is not in sight
        "def step(criterion, out, y):\n    loss = criterion(out, y)\n    return loss.data[0]\n",
        # a `.sum()` of something not proven a tensor (a DataFrame's column sums)
        "totals = frame.sum()\nprint(totals[0])\n",
        # the name was rebound to a 1-dim tensor before the read
        "import torch\nloss = torch.randn(3).mean()\nloss = torch.stack([loss, loss])\nprint(loss[0])\n",
    ]
    INVALID = [
        Invalid(
            """\
from torch import nn
criterion = nn.NLLLoss()
def train(output, target):
    loss = criterion(output, target)
    loss.backward()
    return output, loss.data[0]
""",
            line=6,
            fixed="""\
from torch import nn
criterion = nn.NLLLoss()
def train(output, target):
    loss = criterion(output, target)
    loss.backward()
    return output, loss.item()
""",
        ),
        Invalid(
            """\
from torch import nn
class Trainer:
    def __init__(self):
        self.criterion = nn.MSELoss(reduction="sum")
    def step(self, out, y):
        loss = 0
        for t in range(4):
            loss += self.criterion(out[t], y[t])
        return loss.data[0] / 4
""",
            line=9,
            fixed="""\
from torch import nn
class Trainer:
    def __init__(self):
        self.criterion = nn.MSELoss(reduction="sum")
    def step(self, out, y):
        loss = 0
        for t in range(4):
            loss += self.criterion(out[t], y[t])
        return loss.item() / 4
""",
        ),
        Invalid(
            """\
import torch
d_real = torch.mean(torch.abs(real - recon))
balance = (d_real + 0.5 * torch.abs(d_real)).data[0]
""",
            line=3,
            fixed="""\
import torch
d_real = torch.mean(torch.abs(real - recon))
balance = (d_real + 0.5 * torch.abs(d_real)).item()
""",
        ),
        Invalid(
            """\
import torch.nn.functional as F
loss = F.mse_loss(pred, target)
history.append(loss[0])
""",
            line=3,
            fixed="""\
import torch.nn.functional as F
loss = F.mse_loss(pred, target)
history.append(loss.item())
""",
        ),
    ]

    def visit_Subscript(self, node: cst.Subscript) -> None:
        found = zero_dim_index(self.ctx, node)
        if found is None:
            return
        code = self.ctx.module.code_for_node
        recv = code(found.receiver)
        applicability = SAFE if found.through_data else UNSAFE
        self.report(
            node,
            self.message.format(expr=code(node), why=found.why, recv=recv),
            fix=fix(
                f"Use `{recv}.item()`",
                Replace(node, f"{recv}.item()"),
                applicability=applicability,
                risk="gives a number, not a tensor in the graph",
            ),
        )
