"""TL807 cross-entropy-single-output beyond its embedded examples."""

from __future__ import annotations

from torchlint.findings import Applicability

HEAD = "import torch\nimport torch.nn.functional as F\nfrom torch import nn\n"


def test_tl807_through_a_training_function_and_keyword_out_features(findings):
    src = HEAD + (
        "head = nn.Linear(in_features=16, out_features=1)\n"
        "def train(x, y):\n"
        "    logits = head(x).float()\n"
        "    return F.cross_entropy(logits, y)\n"
    )
    (f,) = findings(src, "TL807")
    assert f.line == 7 and "line 4" in f.message
    assert f.fix.applicability is Applicability.DISPLAY


def test_tl807_look_alikes_are_silent(findings):
    src = HEAD + (
        "two = nn.Linear(16, 2)\n"
        "one = nn.Linear(16, 1)\n"
        "a = F.cross_entropy(two(x), y)\n"
        "b = F.binary_cross_entropy_with_logits(one(x).squeeze(1), y.float())\n"
        "c = F.cross_entropy(one(x).squeeze(1), y)\n"
        "d = F.mse_loss(one(x), y)\n"
        "e = F.cross_entropy(backbone(x), y)\n"
    )
    assert findings(src, "TL807") == []


def test_tl807_a_model_whose_forward_returns_differ_is_unknown(findings):
    src = HEAD + (
        "class Net(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.one = nn.Linear(16, 1)\n"
        "        self.many = nn.Linear(16, 10)\n"
        "    def forward(self, x, binary=False):\n"
        "        if binary:\n"
        "            return self.one(x)\n"
        "        return self.many(x)\n"
        "loss = nn.CrossEntropyLoss()(Net()(x), y)\n"
    )
    assert findings(src, "TL807") == []
