"""activations.py: which activation produced a loss's input, through names, models and files."""

from __future__ import annotations

from pathlib import Path

import libcst as cst

from torchlint.engine import lint_text
from torchlint.engine.context import FileContext
from torchlint.registry import rules


def _feeds(src: str, path: str = "m.py") -> list[tuple[str, str, str]]:
    ctx = FileContext(path, src, cst.parse_module(src))
    ctx.scope = ctx.semantics.scope_for(ctx.module, None)
    return [(f.loss, f.origin.activation, f.origin.elsewhere) for f in ctx.loss_feeds]


def test_direct_named_and_method_activations():
    src = (
        "import torch\nimport torch.nn.functional as F\n"
        "p = F.softmax(z, dim=1)\n"
        "a = F.cross_entropy(p, y)\n"
        "b = F.nll_loss(z.softmax(-1).float(), y)\n"
        "c = torch.nn.BCELoss()(torch.sigmoid(z).squeeze(1), t)\n"
        "d = F.cross_entropy(F.log_softmax(z, 1), y)\n"
    )
    assert _feeds(src) == [
        ("cross_entropy", "softmax", ""),
        ("nll_loss", "softmax", ""),
        ("binary_cross_entropy", "sigmoid", ""),
        ("cross_entropy", "log_softmax", ""),
    ]


def test_model_forward_sequential_and_layer_attributes():
    src = (
        "from torch import nn\n"
        "class Net(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.head = nn.Sequential(nn.Linear(4, 2), nn.Softmax(dim=1))\n"
        "    def forward(self, x):\n"
        "        return self.head(x)\n"
        "crit = nn.CrossEntropyLoss()\n"
        "def train(batches):\n"
        "    net = Net().cuda()\n"
        "    for x, y in batches:\n"
        "        loss = crit(net(x), y)\n"
    )
    assert _feeds(src) == [("cross_entropy", "softmax", "")]


def test_unknowns_stay_silent():
    src = (
        "import torch.nn.functional as F\n"
        "def train(model, crit, x, y):\n"  # parameters: unknown
        "    return crit(model(x), y) + F.cross_entropy(model(x), y)\n"
        "class Net:\n"
        "    def forward(self, x):\n"
        "        if self.training:\n"
        "            return x\n"
        "        return F.softmax(x, 1)\n"
        "loss = F.cross_entropy(Net()(x), y)\n"  # not a module class, and its returns disagree
    )
    assert _feeds(src) == []


def test_a_project_class_in_another_file(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "nets.py").write_text(
        "import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 2)\n"
        "        self.act = nn.Sigmoid()\n\n"
        "    def forward(self, x):\n        h = self.fc(x)\n        return self.act(h)\n"
    )
    main = tmp_path / "train.py"
    main.write_text("from torch import nn\nfrom nets import Net\nm = Net()\nloss = nn.BCELoss()(m(x), t)\n")
    assert _feeds(main.read_text(), str(main)) == [("binary_cross_entropy", "sigmoid", "nets.py:9")]
    findings = lint_text(str(main), main.read_text(), [rules()["TL805"]]).findings
    assert [(f.code, f.line) for f in findings] == [("TL805", 4)]  # at the loss: the sigmoid is elsewhere
    assert "nets.py:9" in findings[0].message


def test_self_call_in_a_module_method_is_its_forward():
    src = (
        "import torch.nn.functional as F\nfrom lightning.pytorch import LightningModule\n"
        "class Lit(LightningModule):\n"
        "    def forward(self, x):\n        return F.softmax(self.net(x), dim=1)\n"
        "    def training_step(self, batch, i):\n        x, y = batch\n        return F.nll_loss(self(x), y)\n"
    )
    assert _feeds(src) == [("nll_loss", "softmax", "")]


def test_one_element_of_a_returned_tuple():
    src = (
        "from torch import nn\n"
        "class D(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.adv = nn.Sequential(nn.Linear(4, 1), nn.Sigmoid())\n"
        "        self.aux = nn.Sequential(nn.Linear(4, 3), nn.Softmax())\n"
        "    def forward(self, x):\n"
        "        validity = self.adv(x)\n"
        "        label = self.aux(x)\n"
        "        return validity, label\n"
        "d = D()\nadv = nn.BCELoss()\naux = nn.CrossEntropyLoss()\n"
        "def step(x, y, t):\n"
        "    real, pred = d(x)\n"
        "    return adv(real, t) + aux(pred, y) + aux(d(x)[0], y) + aux(real[1], y)\n"
    )
    assert _feeds(src) == [  # `real[1]` indexes a tensor, not the tuple: unknown
        ("binary_cross_entropy", "sigmoid", ""),
        ("cross_entropy", "softmax", ""),
        ("cross_entropy", "sigmoid", ""),
    ]
