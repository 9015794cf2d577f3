"""TL804 probabilities-into-nll-loss beyond its embedded examples."""

from __future__ import annotations

from torchlint.findings import Applicability

HEAD = "import torch.nn.functional as F\nfrom torch import nn\n"


def test_a_model_forward_softmax_is_display_only(findings):
    src = HEAD + (
        "class Net(nn.Module):\n    def forward(self, x):\n        return F.softmax(self.fc(x), dim=-1)\n"
        "net = Net()\nloss = nn.NLLLoss()(net(x), y)\n"
    )
    got = findings(src, "TL804")
    assert [(f.line, f.fix.applicability) for f in got] == [(5, Applicability.DISPLAY)]


def test_a_bare_imported_softmax_has_no_fix(findings):
    src = "from torch.nn.functional import nll_loss, softmax\nloss = nll_loss(softmax(z, 1), y)\n"
    got = findings(src, "TL804")
    assert len(got) == 1 and got[0].fix is None


def test_log_softmax_and_cross_entropy_are_not_this_rule(findings):
    assert findings(HEAD + "loss = F.nll_loss(F.log_softmax(z, 1), y)\n", "TL804") == []
    assert findings(HEAD + "loss = F.cross_entropy(F.softmax(z, 1), y)\n", "TL804") == []
