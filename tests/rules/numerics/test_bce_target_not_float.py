"""TL806 bce-target-not-float beyond its embedded examples."""

from __future__ import annotations

HEAD = "import torch\nimport torch.nn.functional as F\nfrom torch import nn\n"


def test_tl806_gan_labels_through_names_and_a_criterion_attribute(findings, fixed):
    src = HEAD + (
        "class Trainer:\n"
        "    def __init__(self):\n"
        "        self.criterion = nn.BCEWithLogitsLoss()\n"
        "    def step(self, out, n):\n"
        "        real = torch.full((n,), 1)\n"
        "        return self.criterion(out, real)\n"
    )
    (f,) = findings(src, "TL806")
    assert f.line == 9 and "torch.int64" in f.message and "`real`" in f.message
    assert "self.criterion(out, real.float())" in fixed(src, "TL806")


def test_tl806_integer_evidence(findings):
    cases = [
        "torch.randint(0, 2, (8,))",
        "torch.zeros(8).long()",
        "torch.tensor([[1, 0], [0, 1]])",
        "torch.ones(8, dtype=torch.int32)[:4]",
        "logits.argmax(1)",
        "y.to(torch.long)",
        "y.type(torch.LongTensor)",
        "torch.full((8,), True)",
        "torch.zeros(8, dtype=torch.uint8).view(-1, 1)",
    ]
    for target in cases:
        assert len(findings(HEAD + f"loss = F.binary_cross_entropy(p, {target})\n", "TL806")) == 1, target


def test_tl806_float_and_unknown_targets_are_silent(findings):
    cases = [
        "torch.ones(8)",
        "torch.full((8,), 1.0)",
        "torch.tensor([0.0, 1.0])",
        "torch.tensor([0, 1.0])",
        "y.long().float()",
        "y.long().to(torch.float32)",
        "y.long().to(other)",
        "torch.ones_like(p)",
        "batch['label']",
    ]
    for target in cases:
        assert findings(HEAD + f"loss = F.binary_cross_entropy(p, {target})\n", "TL806") == [], target


def test_tl806_only_binary_cross_entropy(findings):
    src = HEAD + "t = torch.randint(0, 2, (8,))\nloss = nn.CrossEntropyLoss()(z, t) + nn.MSELoss()(z, t)\n"
    assert findings(src, "TL806") == []


def test_tl806_a_named_integer_fill_value(findings):
    src = (
        HEAD
        + "real_label = 1\nfake_label = 0.0\ndef step(b, out):\n    a = F.binary_cross_entropy(out, torch.full((b,), real_label))\n"
    )
    src += "    return a + F.binary_cross_entropy(out, torch.full((b,), fake_label))\n"
    assert [f.line for f in findings(src, "TL806")] == [7]
