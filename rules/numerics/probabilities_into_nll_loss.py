"""TL804 probabilities-into-nll-loss: nll_loss fed softmax output instead of log_softmax"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.rule import DISPLAY, UNSAFE, Invalid, NodeFix, Replace, fix
from torchlint.engine.torch.activations import Feed
from torchlint.findings import Severity

from ._helpers import LossInputRule, inline

_LOG_NAMES = {"softmax": "log_softmax", "Softmax": "LogSoftmax"}


class ProbabilitiesIntoNllLoss(LossInputRule):
    code = "TL804"
    analyses = frozenset({Analysis.CALL_SITES, Analysis.LOSS_FEEDS, Analysis.OWN_SUMMARY, Analysis.VALUES})
    requires = ("nll_loss", "NLLLoss")
    name = "probabilities-into-nll-loss"
    loss = "nll_loss"
    activation = "softmax"
    message = (
        "softmax output fed to `nll_loss`, which expects log-probabilities ({place}): the loss is "
        "`-p[target]` instead of `-log p[target]` and the model trains on the wrong objective — use "
        "`log_softmax`"
    )
    severity = Severity.ERROR
    category = "correctness"
    summary = "nll_loss / NLLLoss fed softmax output instead of log_softmax"
    what = (
        "Flags a value produced by a softmax (`F.softmax`, `torch.softmax`, `x.softmax(dim)`, an `nn.Softmax` "
        "layer, or a model whose `forward` returns one — in this file or another file of the project) that "
        "reaches `nn.NLLLoss` or `F.nll_loss` as its input."
    )
    why = (
        "`nll_loss` takes log-probabilities and returns `-input[target]`. Given probabilities it minimises "
        "`-p[target]`: bounded, with gradients that vanish for confident wrong predictions — the model "
        "trains on a different objective, silently. `log_softmax` (or `cross_entropy` on the logits) is "
        "the intended input; `torch.log(F.softmax(x))` is the same but numerically worse."
    )
    example = """\
import torch.nn.functional as F

loss = F.nll_loss(F.softmax(logits, dim=1), target)
"""
    fix_example = """\
import torch.nn.functional as F

loss = F.nll_loss(F.log_softmax(logits, dim=1), target)
"""
    fix_safety = (
        "Switching to `log_softmax` changes the loss (that is the point). When the softmax is applied inside "
        "the loss's argument nothing else reads it and the fix is unsafe; when it is in a model's `forward`, "
        "an `nn.Sequential` layer or a variable, other code may read those probabilities, so the fix is "
        "display-only. No fix for a softmax imported as a bare name or applied through a layer attribute."
    )
    VALID = [
        """\
import torch.nn.functional as F
loss = F.nll_loss(F.log_softmax(logits, dim=1), target)
""",
        """\
import torch
import torch.nn.functional as F
loss = F.nll_loss(torch.log(F.softmax(logits, dim=1) + 1e-8), target)
""",
        """\
from torch import nn
model = nn.Sequential(nn.Linear(20, 10), nn.LogSoftmax(dim=1))
loss = nn.NLLLoss()(model(x), y)
probs = model(x).exp()
""",
        """\
import torch.nn.functional as F
logp = F.log_softmax(logits, dim=1)
loss = F.nll_loss(logp, target)
confidence = F.softmax(logits, dim=1).max(1).values
""",
    ]
    INVALID = [
        Invalid(
            """\
import torch.nn.functional as F
loss = F.nll_loss(logits.softmax(dim=1), target)
""",
            line=2,
            fixed="""\
import torch.nn.functional as F
loss = F.nll_loss(logits.log_softmax(dim=1), target)
""",
        ),
        Invalid(
            """\
from torch import nn
model = nn.Sequential(nn.Linear(20, 10), nn.Softmax(dim=1))
criterion = nn.NLLLoss()
for x, y in loader:
    loss = criterion(model(x), y)
""",
            line=2,
            fixed="""\
from torch import nn
model = nn.Sequential(nn.Linear(20, 10), nn.LogSoftmax(dim=1))
criterion = nn.NLLLoss()
for x, y in loader:
    loss = criterion(model(x), y)
""",
        ),
        Invalid(
            """\
import torch
import torch.nn.functional as F
probs = torch.softmax(scores, -1)
loss = F.nll_loss(probs, labels)
""",
            line=3,
            fixed="""\
import torch
import torch.nn.functional as F
probs = torch.log_softmax(scores, -1)
loss = F.nll_loss(probs, labels)
""",
        ),
    ]

    def fix_for(self, feed: Feed) -> NodeFix | None:
        node = feed.origin.node
        if not isinstance(node, cst.Call) or not isinstance(node.func, cst.Attribute):
            return None
        new = _LOG_NAMES.get(node.func.attr.value)
        if new is None:
            return None
        renamed = node.with_changes(func=node.func.with_changes(attr=cst.Name(new)))
        applicability = UNSAFE if inline(feed) else DISPLAY
        return fix(
            f"Use `{new}`", Replace(node, renamed), applicability=applicability, risk="changes the loss and so training"
        )
