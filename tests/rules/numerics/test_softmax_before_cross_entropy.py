"""TL803 softmax-before-cross-entropy beyond its embedded examples."""

from __future__ import annotations

from torchlint.findings import Applicability

HEAD = "import torch\nimport torch.nn.functional as F\nfrom torch import nn\n"


def test_inline_softmax_fix_is_unsafe_and_a_forward_softmax_fix_display_only(findings):
    inline = findings(HEAD + "loss = F.cross_entropy(torch.softmax(z, 1), y)\n", "TL803")
    assert [f.fix.applicability for f in inline] == [Applicability.UNSAFE]
    named = findings(HEAD + "p = torch.softmax(z, 1)\nloss = F.cross_entropy(p, y)\nprint(p.max())\n", "TL803")
    assert [(f.line, f.fix.applicability) for f in named] == [(4, Applicability.DISPLAY)]


def test_one_finding_per_softmax_feeding_two_losses(findings):
    src = HEAD + "p = z.softmax(dim=1)\na = F.cross_entropy(p, y)\nb = nn.CrossEntropyLoss()(p, y)\n"
    assert [f.line for f in findings(src, "TL803")] == [4]


def test_fix_keeps_precedence_of_the_unwrapped_input(fixed):
    src = HEAD + "loss = F.cross_entropy(F.softmax(a + b, dim=1).float(), y)\n"
    assert fixed(src, "TL803") == HEAD + "loss = F.cross_entropy((a + b).float(), y)\n"


def test_softmax_targets_and_other_libraries_are_silent(findings):
    assert findings(HEAD + "loss = F.cross_entropy(z, F.softmax(t, dim=1))\n", "TL803") == []
    assert (
        findings("import numpy as np\nimport torch.nn.functional as F\nloss = F.cross_entropy(np.exp(z), y)\n", "TL803")
        == []
    )
    src = (
        HEAD
        + "class M(nn.Module):\n    def forward(self, x):\n        return self.softmax(x)\nloss = F.cross_entropy(M()(x), y)\n"
    )
    assert findings(src, "TL803") == []  # `self.softmax` is never built: its name proves nothing
