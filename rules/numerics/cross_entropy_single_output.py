"""TL807 cross-entropy-single-output: cross_entropy over a head with one output, a loss that is always zero"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.core.callargs import get_arg
from torchlint.engine.rule import DISPLAY, Invalid, NodeFix, Replace, Rule, fix
from torchlint.engine.semantic.kinds import Kind
from torchlint.engine.semantic.values import current_where
from torchlint.engine.torch.head_width import head_of
from torchlint.findings import Severity

from ._helpers import line_of

_FUNCTIONS = frozenset({"torch.nn.functional.cross_entropy"})
_MODULES = frozenset({"torch.nn.CrossEntropyLoss"})


class CrossEntropySingleOutput(Rule):
    code = "TL807"
    analyses = frozenset({Analysis.CALL_SITES, Analysis.KINDS, Analysis.OWN_SUMMARY, Analysis.SCOPES, Analysis.VALUES})
    requires = ("cross_entropy", "CrossEntropyLoss")
    name = "cross-entropy-single-output"
    message = (
        "cross-entropy over the one output of `nn.Linear` on line {line}: log_softmax over one class is 0, so "
        "the loss and every gradient are zero (or the target is out of bounds) — the model never trains; use "
        "`binary_cross_entropy_with_logits` for one logit, or give the head one output per class"
    )
    severity = Severity.ERROR
    category = "correctness"
    summary = "cross_entropy / CrossEntropyLoss on a head with one output: zero loss, no training"
    what = (
        "Flags `F.cross_entropy(x, y)` and `nn.CrossEntropyLoss` calls whose input is the output of an "
        "`nn.Linear(d, 1)`: applied directly, through an `nn.Sequential` ending in it, or through a model "
        "class of this file whose `forward` returns it (followed through names, `self.` layers, "
        "`.to(device)` and dtype casts). A reshaped output (`.squeeze(1)`, `.view(-1)`) is not followed."
    )
    why = (
        "`cross_entropy` normalises with a softmax over the class dimension. With one class that softmax is "
        "1, its log 0: for class-0 targets the loss is exactly 0 and every weight gets a zero gradient "
        "(checked on torch 2.13: loss 0.0, grad 0.0), so the model never trains while the loop runs without "
        "an error; any other target raises `IndexError: Target 1 is out of bounds`. A binary task with one "
        "logit wants `BCEWithLogitsLoss`."
    )
    example = """\
import torch.nn.functional as F
from torch import nn

head = nn.Linear(128, 1)
loss = F.cross_entropy(head(features), labels)
"""
    fix_example = """\
import torch.nn.functional as F
from torch import nn

head = nn.Linear(128, 1)
loss = F.binary_cross_entropy_with_logits(head(features).squeeze(1), labels.float())
"""
    fix_safety = (
        "Display only: it changes the loss (to the binary one, with `.squeeze(1)` on the logits and `.float()` "
        "targets); whether the task is binary or the head should have one output per class is the author's call."
    )
    VALID = [
        "import torch.nn.functional as F\nfrom torch import nn\nhead = nn.Linear(128, 2)\n"
        "loss = F.cross_entropy(head(x), y)\n",
        "from torch import nn\nhead = nn.Linear(128, 1)\nloss = nn.BCEWithLogitsLoss()(head(x).squeeze(1), y)\n",
        # reshaped: a different failure, not followed
        "import torch.nn.functional as F\nfrom torch import nn\nhead = nn.Linear(128, 1)\n"
        "loss = F.cross_entropy(head(x).view(1, -1), y)\n",
        "import torch.nn.functional as F\nfrom torch import nn\nhead = nn.Linear(128, n_classes)\n"
        "loss = F.cross_entropy(head(x), y)\n",
    ]
    INVALID = [
        Invalid(
            """\
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(32, 16)
        self.out = nn.Linear(16, 1)
    def forward(self, x):
        x = torch.relu(self.body(x))
        return self.out(x)
model = Net().to("cuda")
criterion = nn.CrossEntropyLoss()
loss = criterion(model(x), y)
""",
            line=13,
            fixed="""\
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(32, 16)
        self.out = nn.Linear(16, 1)
    def forward(self, x):
        x = torch.relu(self.body(x))
        return self.out(x)
model = Net().to("cuda")
criterion = nn.CrossEntropyLoss()
loss = torch.nn.functional.binary_cross_entropy_with_logits(model(x).squeeze(1), y.float())
""",
        ),
        Invalid(
            "import torch\nimport torch.nn.functional as F\nfrom torch import nn\n"
            "net = nn.Sequential(nn.Linear(8, 4), nn.ReLU(), nn.Linear(4, 1))\nloss = F.cross_entropy(net(x), y)\n",
            line=5,
            fixed="import torch\nimport torch.nn.functional as F\nfrom torch import nn\n"
            "net = nn.Sequential(nn.Linear(8, 4), nn.ReLU(), nn.Linear(4, 1))\n"
            "loss = F.binary_cross_entropy_with_logits(net(x).squeeze(1), y.float())\n",
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        if not self._is_cross_entropy(node):
            return
        arg = get_arg(node, "input", 0)
        if arg is None:
            return
        head = head_of(self.ctx, arg.value, current_where(self.ctx))
        if head is None or head.width != 1:
            return
        message = self.message.format(line=line_of(self.ctx.module, head.layer))
        self.report(node, message, fix=self._fix(node))

    def _is_cross_entropy(self, call: cst.Call) -> bool:
        if self.ctx.qualname(call.func) in _FUNCTIONS:
            return True
        if not isinstance(call.func, cst.Call) and not self.ctx.kind(call.func) & Kind.CRITERION:
            return False
        built = self.ctx.values.builder(call.func, current_where(self.ctx))
        return built is not None and built[0] is not call and self.ctx.qualname(built[0].func) in _MODULES

    def _fix(self, call: cst.Call) -> NodeFix | None:
        imports = self.ctx.imports
        functional = imports.local_name("torch.nn.functional")
        torch = imports.local_name("torch")
        module = functional or (f"{torch}.nn.functional" if torch is not None else None)
        plain = [a for a in call.args if a.keyword is None and not a.star]
        if module is None or len(plain) != 2 or len(call.args) != 2:
            return None
        code = self.ctx.module.code_for_node
        logits, target = (code(a.value) for a in plain)
        new = f"{module}.binary_cross_entropy_with_logits({logits}.squeeze(1), {target}.float())"
        return fix("Use `binary_cross_entropy_with_logits`", Replace(call, new), applicability=DISPLAY)
