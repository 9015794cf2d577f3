"""TL805 sigmoid-before-bce: sigmoid output fed to BCELoss instead of BCEWithLogitsLoss on the logits"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.rule import UNSAFE, Invalid, NodeFix, Replace, fix
from torchlint.engine.torch.activations import Feed
from torchlint.findings import Severity

from ._helpers import LossInputRule, activation_input, inline

_WITH_LOGITS = {"binary_cross_entropy": "binary_cross_entropy_with_logits", "BCELoss": "BCEWithLogitsLoss"}


class SigmoidBeforeBce(LossInputRule):
    code = "TL805"
    analyses = frozenset({Analysis.CALL_SITES, Analysis.LOSS_FEEDS, Analysis.OWN_SUMMARY, Analysis.VALUES})
    requires = ("binary_cross_entropy", "BCELoss")
    name = "sigmoid-before-bce"
    loss = "binary_cross_entropy"
    activation = "sigmoid"
    message = (
        "sigmoid output fed to binary cross-entropy ({place}): `log(sigmoid(x))` loses precision for large "
        "|x| (clamped at -100, NaN-prone in half precision, refused under autocast) — use "
        "`BCEWithLogitsLoss` / `binary_cross_entropy_with_logits` on the logits"
    )
    severity = Severity.WARNING
    category = "correctness"
    opt_in = (
        "Measured on nine public repositories it was not tuned on, all 13 findings were debatable: float32 "
        "recipes whose sigmoid outputs never saturate enough for BCELoss's clamp to matter. Select it for "
        "mixed-precision training, where `BCELoss` is refused under autocast, or for very confident models."
    )
    summary = "Sigmoid output fed to BCELoss instead of BCEWithLogitsLoss on the logits"
    what = (
        "Flags a value produced by a sigmoid (`torch.sigmoid`, `F.sigmoid`, `x.sigmoid()`, an `nn.Sigmoid` "
        "layer, or a model whose `forward` returns one — in this file or another file of the project) that "
        "reaches `nn.BCELoss` or `F.binary_cross_entropy` as its input."
    )
    why = (
        "`BCELoss` takes the log of the probabilities: for confident logits `sigmoid` rounds to exactly 0 or "
        "1, the log is clamped at -100 and the gradient is lost; in float16 this happens much sooner, and "
        "under `torch.autocast` `binary_cross_entropy` raises an error. `BCEWithLogitsLoss` fuses the two "
        "with the log-sum-exp trick and is exact for every logit."
    )
    example = """\
import torch
import torch.nn.functional as F

loss = F.binary_cross_entropy(torch.sigmoid(logits), targets)
"""
    fix_example = """\
import torch
import torch.nn.functional as F

loss = F.binary_cross_entropy_with_logits(logits, targets)
"""
    fix_safety = (
        "Offered when the sigmoid is applied inside the argument of an inline `F.binary_cross_entropy(...)` "
        "or `nn.BCELoss(...)(...)`: both edits are in the one call. Unsafe: the loss values change slightly "
        "(they become exact where they were clamped), so training does too. No fix when the sigmoid is in a "
        "model's `forward` or a variable, or the loss module is bound to a name: other code reads those "
        "probabilities, and the loss is switched where it is built."
    )
    VALID = [
        """\
from torch import nn
criterion = nn.BCEWithLogitsLoss()
loss = criterion(logits, targets)
preds = torch.sigmoid(logits) > 0.5
""",
        """\
import torch
import torch.nn.functional as F
probs = torch.sigmoid(logits)
mask = probs > 0.5
loss = F.binary_cross_entropy_with_logits(logits, targets)
""",
        """\
import torch.nn.functional as F
loss = F.binary_cross_entropy(torch.clamp(p, 1e-6, 1 - 1e-6), targets)
""",
    ]
    INVALID = [
        Invalid(
            """\
import torch
import torch.nn.functional as F
loss = F.binary_cross_entropy(torch.sigmoid(logits).squeeze(1), targets)
""",
            line=3,
            fixed="""\
import torch
import torch.nn.functional as F
loss = F.binary_cross_entropy_with_logits(logits.squeeze(1), targets)
""",
        ),
        Invalid(
            """\
import torch
from torch import nn
class Disc(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(64, 1), nn.Sigmoid())
    def forward(self, x):
        return self.net(x)
disc = Disc()
criterion = nn.BCELoss()
loss = criterion(disc(fake), torch.ones(8, 1))
""",
            line=6,
        ),
        Invalid(
            """\
import torch
from torch import nn
loss = nn.BCELoss(reduction="sum")(z.sigmoid(), y)
""",
            line=3,
            fixed="""\
import torch
from torch import nn
loss = nn.BCEWithLogitsLoss(reduction="sum")(z, y)
""",
        ),
    ]

    def fix_for(self, feed: Feed) -> NodeFix | None:
        node = feed.origin.node
        inner = activation_input(node) if node is not None else None
        func = feed.call.func.func if isinstance(feed.call.func, cst.Call) else feed.call.func
        if node is None or inner is None or not inline(feed) or not isinstance(func, cst.Attribute):
            return None
        new = _WITH_LOGITS.get(func.attr.value)
        if new is None:
            return None
        return fix(
            f"Use `{new}` on the logits",
            Replace(node, inner),
            Replace(func, func.with_changes(attr=cst.Name(new))),
            applicability=UNSAFE,
            risk="changes the loss values and so training",
        )
