"""TL803 softmax-before-cross-entropy: softmax output fed to CrossEntropyLoss, which applies log_softmax itself"""

from __future__ import annotations

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.rule import DISPLAY, UNSAFE, Invalid, NodeFix, Replace, fix
from torchlint.engine.torch.activations import Feed
from torchlint.findings import Severity

from ._helpers import LossInputRule, activation_input, inline


class SoftmaxBeforeCrossEntropy(LossInputRule):
    code = "TL803"
    analyses = frozenset({Analysis.CALL_SITES, Analysis.LOSS_FEEDS, Analysis.OWN_SUMMARY, Analysis.VALUES})
    requires = ("cross_entropy", "CrossEntropyLoss")
    name = "softmax-before-cross-entropy"
    loss = "cross_entropy"
    activation = "softmax"
    message = (
        "softmax output fed to cross-entropy, which applies `log_softmax` itself ({place}): the softmax is "
        "applied twice, gradients shrink and training stalls without an error — give the loss the logits"
    )
    severity = Severity.ERROR
    category = "correctness"
    summary = "Softmax output fed to CrossEntropyLoss, which applies log_softmax itself"
    what = (
        "Flags a value produced by a softmax (`F.softmax`, `torch.softmax`, `x.softmax(dim)`, an `nn.Softmax` "
        "layer, an `nn.Sequential` ending in one, or a model whose `forward` returns one — in this file or "
        "in another file of the project) that reaches `nn.CrossEntropyLoss` or `F.cross_entropy` as its "
        "input. Reported at the softmax when it is in the same file (the message names the loss's line), "
        "else at the loss call (naming the file and line of the softmax)."
    )
    why = (
        "`cross_entropy` expects unnormalised logits and computes `log_softmax` itself. Fed probabilities, "
        "it computes `log_softmax(softmax(x))`: the inputs are squashed into [0, 1], the loss can no longer "
        "go to zero, gradients become tiny and training stalls or converges to a worse model, with no error "
        "or warning. A softmax belongs where probabilities are read: prediction, metrics, sampling."
    )
    example = """\
import torch.nn.functional as F
from torch import nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(20, 10)

    def forward(self, x):
        return F.softmax(self.fc(x), dim=1)

model = Net()
criterion = nn.CrossEntropyLoss()
for x, y in loader:
    loss = criterion(model(x), y)
"""
    fix_example = """\
import torch.nn.functional as F
from torch import nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(20, 10)

    def forward(self, x):
        return self.fc(x)

model = Net()
criterion = nn.CrossEntropyLoss()
for x, y in loader:
    loss = criterion(model(x), y)
"""
    fix_safety = (
        "Dropping the softmax changes the loss (that is the point) and so the trained model. When the softmax "
        "is applied inside the loss's argument nothing else reads it and the fix is unsafe; when it is in a "
        "model's `forward` or a variable, other code (prediction, metrics, thresholds) reads those "
        "probabilities and would get logits, so the fix is display-only: apply the softmax there instead, "
        "under `torch.no_grad()`. No fix when the softmax is an `nn.Softmax` layer of an `nn.Sequential`."
    )
    VALID = [
        # logits into the loss; softmax only for the prediction, after the loss
        """\
import torch
import torch.nn.functional as F
from torch import nn
criterion = nn.CrossEntropyLoss()
for x, y in loader:
    logits = model(x)
    loss = criterion(logits, y)
    probs = F.softmax(logits, dim=1)
""",
        # softmax for prediction under no_grad
        """\
import torch
import torch.nn.functional as F
def predict(model, x):
    with torch.no_grad():
        return F.softmax(model(x), dim=-1).argmax(-1)
loss = F.cross_entropy(model(x), y)
""",
        # knowledge distillation: soft targets are probabilities; the input stays logits
        """\
import torch.nn.functional as F
T = 4.0
kd = F.kl_div(F.log_softmax(s / T, dim=1), F.softmax(t / T, dim=1), reduction="batchmean")
soft = F.cross_entropy(s, F.softmax(t / T, dim=1))
""",
        # a forward that returns probabilities only in eval mode
        """\
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def forward(self, x):
        logits = self.fc(x)
        if self.training:
            return logits
        return F.softmax(logits, dim=1)
model = Net()
loss = nn.CrossEntropyLoss()(model(x), y)
""",
        # reassigned under a condition: unknown which value reaches the loss
        """\
import torch.nn.functional as F
out = model(x)
if calibrate:
    out = F.softmax(out, dim=1)
loss = F.cross_entropy(out, y)
""",
        # NumPy/SciPy softmax is not torch's (and cannot reach a torch loss anyway)
        """\
import torch.nn.functional as F
from scipy.special import softmax
p = softmax(z, axis=1)
loss = F.cross_entropy(p, y)
""",
    ]
    INVALID = [
        Invalid(
            """\
import torch.nn.functional as F
loss = F.cross_entropy(F.softmax(logits, dim=1), target)
""",
            line=2,
            fixed="""\
import torch.nn.functional as F
loss = F.cross_entropy(logits, target)
""",
        ),
        Invalid(
            """\
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(20, 10)
    def forward(self, x):
        x = self.fc(x)
        x = F.softmax(x, dim=1)
        return x
model = Net().to("cuda")
criterion = nn.CrossEntropyLoss()
def train(loader):
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
""",
            line=9,
            message=(
                "softmax output fed to cross-entropy, which applies `log_softmax` itself (it reaches "
                "`nn.CrossEntropyLoss` on line 15): the softmax is applied twice, gradients shrink and training "
                "stalls without an error — give the loss the logits"
            ),
            fixed="""\
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(20, 10)
    def forward(self, x):
        x = self.fc(x)
        x = x
        return x
model = Net().to("cuda")
criterion = nn.CrossEntropyLoss()
def train(loader):
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
""",
        ),
        Invalid(
            """\
from torch import nn
model = nn.Sequential(nn.Linear(20, 10), nn.Softmax(dim=1))
loss = nn.CrossEntropyLoss()(model(x), y)
""",
            line=2,
        ),
        Invalid(
            """\
import torch
from torch import nn
class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 3)
        self.softmax = nn.Softmax(dim=-1)
    def forward(self, x):
        return self.softmax(self.fc(x))
head = Head()
for x, y in batches:
    loss = nn.functional.cross_entropy(head(x), y)
""",
            line=9,
            fixed="""\
import torch
from torch import nn
class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 3)
        self.softmax = nn.Softmax(dim=-1)
    def forward(self, x):
        return self.fc(x)
head = Head()
for x, y in batches:
    loss = nn.functional.cross_entropy(head(x), y)
""",
        ),
    ]

    def fix_for(self, feed: Feed) -> NodeFix | None:
        node = feed.origin.node
        inner = activation_input(node) if node is not None else None
        if node is None or inner is None:
            return None
        applicability = UNSAFE if inline(feed) else DISPLAY
        return fix(
            "Drop the softmax: give the loss the logits",
            Replace(node, inner),
            applicability=applicability,
            risk="changes the loss and so training",
        )
