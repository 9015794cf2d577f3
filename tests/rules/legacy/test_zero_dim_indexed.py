"""TL708 zero-dim-indexed beyond its embedded examples, and its hand-off with TL703."""

from __future__ import annotations

from torchlint.engine import lint_text
from torchlint.registry import rules

# TL703 alone reports `critic.data[0]` here: a `.data` read mixed back into the graph in `forward`.
MIXED = """\
import torch
from torch import nn
class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.value = nn.Linear(4, 1)
    def forward(self, x, reward):
        critic = self.value(x).mean()
        return reward - critic.data{index}
"""


def _codes(src: str, *codes: str) -> list[tuple[int, str]]:
    return [(f.line, f.code) for f in lint_text("m.py", src, [rules()[c] for c in codes]).findings]


def test_tl708_is_reported_instead_of_tl703_on_a_zero_dim_read():
    assert _codes(MIXED.format(index="[0]"), "TL703", "TL708") == [(9, "TL708")]


def test_tl703_still_reports_the_same_read_without_the_index():
    assert _codes(MIXED.format(index=""), "TL703", "TL708") == [(9, "TL703")]


def test_tl708_criterion_of_the_module_scope_inside_a_function(findings):
    src = (
        "import torch.nn as nn\ncriterion = nn.BCELoss()\n"
        "def run(out, y):\n    loss = criterion(out, y)\n    print(loss.data[0])\n"
    )
    assert [f.line for f in findings(src, "TL708")] == [5]


def test_tl708_criterion_with_a_non_literal_reduction_is_silent(findings):
    src = "from torch import nn\ncriterion = nn.MSELoss(reduction=mode)\nloss = criterion(a, b)\nloss.data[0]\n"
    assert findings(src, "TL708") == []


def test_tl708_legacy_reduce_false_is_silent(findings):
    src = "import torch.nn.functional as F\nloss = F.l1_loss(a, b, reduce=False)\nloss.data[0]\n"
    assert findings(src, "TL708") == []


def test_tl708_sum_with_a_tensor_of_unknown_shape_is_silent(findings):
    src = "import torch\nloss = torch.randn(3).mean() + offsets\nloss[0]\n"
    assert findings(src, "TL708") == []


def test_tl708_slices_and_ellipsis_are_silent(findings):
    src = "import torch\nloss = torch.randn(3).mean()\nloss[...]\nloss[None]\nloss[i]\n"
    assert findings(src, "TL708") == []


def test_tl708_negative_index_is_reported(findings):
    src = "import torch\nloss = torch.randn(3).sum()\nprint(loss.data[-1])\n"
    [f] = findings(src, "TL708")
    assert f.fix is not None and f.fix.edits[0].content == "loss.item()"


def test_tl708_a_parameter_shadowing_a_module_criterion_is_silent(findings):
    src = (
        "from torch import nn\ncriterion = nn.NLLLoss()\n"
        "def run(out, y, criterion):\n    loss = criterion(out, y)\n    print(loss.data[0])\n"
        "run(a, b, nn.NLLLoss(reduction='none'))\n"
    )
    assert findings(src, "TL708") == []
