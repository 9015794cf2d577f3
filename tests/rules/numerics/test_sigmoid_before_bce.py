"""TL805 sigmoid-before-bce beyond its embedded examples."""

from __future__ import annotations

HEAD = "import torch\nimport torch.nn.functional as F\nfrom torch import nn\n"


def test_a_criterion_bound_to_a_name_is_reported_without_a_fix(findings):
    src = HEAD + "crit = nn.BCELoss()\nfor x, t in batches:\n    loss = crit(torch.sigmoid(x), t)\n"
    got = findings(src, "TL805")
    assert [f.line for f in got] == [6] and got[0].fix is None


def test_threshold_uses_and_with_logits_losses_are_silent(findings):
    src = HEAD + (
        "p = torch.sigmoid(z)\npred = p > 0.5\n"
        "loss = F.binary_cross_entropy_with_logits(z, t) + nn.BCEWithLogitsLoss()(z, t)\n"
    )
    assert findings(src, "TL805") == []


def test_inline_fix_rewrites_the_loss_and_drops_the_sigmoid(fixed):
    src = HEAD + "loss = nn.functional.binary_cross_entropy(nn.Sigmoid()(z), t, reduction='sum')\n"
    assert fixed(src, "TL805") == HEAD + (
        "loss = nn.functional.binary_cross_entropy_with_logits(z, t, reduction='sum')\n"
    )
