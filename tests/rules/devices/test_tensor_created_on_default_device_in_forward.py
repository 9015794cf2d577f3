"""TL304 tensor-created-on-default-device-in-forward beyond its embedded examples."""

from __future__ import annotations

FORWARD = "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def forward(self, x):\n{body}"


def test_tl304_later_relocation_or_index_use_is_fine(findings):
    body = "        idx = torch.randperm(x.size(0))\n        pos = torch.arange(8)\n        pos = pos.to(x.device)\n        return x[idx] + pos\n"
    assert findings(FORWARD.format(body=body), "TL304") == []


def test_tl304_arithmetic_and_setitem_uses_are_followed(findings):
    body = (
        "        n = torch.ones(x.shape[0]) * 4 + 1\n        drop = torch.randint(1, 5, (x.shape[0],))\n"
        "        n[:2] = drop[:2]\n        n = n.to(x.device)\n        return x * n\n"
    )
    assert findings(FORWARD.format(body=body), "TL304") == []


def test_tl304_no_fix_for_optional_input(findings):
    src = "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def forward(self, x=None):\n        return torch.zeros(3)\n"
    (f,) = findings(src, "TL304")
    assert f.fix is None
