"""TL206 dropout2d-on-flat-input beyond its embedded examples."""

from __future__ import annotations


def test_tl206_flatten_from_dim_two_is_not_flat(findings):
    src = "from torch import nn\nhead = nn.Sequential(nn.Flatten(2), nn.Dropout2d(0.1))\n"
    assert findings(src, "TL206") == []


def test_tl206_unknown_layer_breaks_the_chain(findings):
    src = "from torch import nn\nhead = nn.Sequential(nn.Flatten(), Unflatten(), nn.Dropout2d(0.1))\n"
    assert findings(src, "TL206") == []


def test_tl206_dropout3d_on_torch_flatten(findings):
    src = "import torch\nimport torch.nn.functional as F\ny = F.dropout3d(torch.flatten(x, 1))\n"
    (f,) = findings(src, "TL206")
    assert "F.dropout" in f.message


def test_tl206_imported_class_has_no_fix(findings):
    src = "from torch.nn import Dropout2d, Flatten, Sequential\nhead = Sequential(Flatten(), Dropout2d())\n"
    (f,) = findings(src, "TL206")
    assert f.fix is None


def test_tl206_flat_stays_flat_through_dropout_and_linear(findings):
    src = (
        "import torch\nfrom torch import nn\nclass Net(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.fc = nn.Linear(8, 8)\n        self.d1 = nn.Dropout2d()\n"
        "        self.d2 = nn.Dropout2d()\n    def forward(self, x):\n        h = self.d1(x.flatten(1))\n"
        "        return self.d2(self.fc(h))\n"
    )
    assert [f.line for f in findings(src, "TL206")] == [10, 11]
