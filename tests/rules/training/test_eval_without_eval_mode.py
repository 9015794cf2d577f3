"""TL115 eval-without-eval-mode beyond its embedded examples."""

from __future__ import annotations

import pytest

HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\nfrom torchvision import models\n"


@pytest.mark.parametrize(
    "build,flagged",
    [
        ("nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.1))", True),
        ("nn.Sequential(nn.Linear(4, 4), nn.Dropout(p=0.0))", False),  # a dropout that drops nothing
        ("nn.LSTM(4, 4, num_layers=2, dropout=0.2)", True),
        ("nn.LSTM(4, 4)", False),  # dropout 0 by default
        ("nn.TransformerEncoderLayer(16, 4)", True),  # dropout 0.1 by default
        ("nn.TransformerEncoderLayer(16, 4, dropout=0)", False),
        ("nn.InstanceNorm2d(4)", False),  # no running statistics by default
        ("nn.InstanceNorm2d(4, track_running_stats=True)", True),
        ("models.resnet50()", True),
        ("models.vit_b_16()", False),  # LayerNorm and dropout 0.0
        ("Net()", True),
        ("Plain()", False),
    ],
)
def test_tl115_mode_dependent_layers(build, flagged, findings):
    src = (
        HEAD
        + "class Net(nn.Module):\n    def forward(self, x):\n        return F.dropout(x, 0.5, self.training)\n"
        + "class Plain(nn.Module):\n    def forward(self, x):\n        return x * 2\n"
        + f"model = {build}\nwith torch.no_grad():\n    out = model(x)\n"
    )
    assert bool(findings(src, "TL115")) is flagged


@pytest.mark.parametrize(
    "before",
    [
        "model.eval()",
        "model.train(False)",
        "model.train(mode)",  # a mode the analysis cannot read
        "model.apply(freeze)",
        "prepare(model)",  # unknown code receives the model
        "for m in model.modules():\n    m.eval()",
    ],
)
def test_tl115_anything_that_may_switch_the_mode_silences(before, findings):
    src = HEAD + f"model = models.resnet18()\n{before}\nwith torch.no_grad():\n    out = model(x)\n"
    assert findings(src, "TL115") == []


def test_tl115_a_switch_after_the_pass_in_the_same_loop_reaches_it(findings):
    src = (
        HEAD + "model = models.resnet18()\nfor epoch in range(3):\n    with torch.no_grad():\n        out = model(x)\n"
        "    model.eval()\n"
    )
    assert findings(src, "TL115") == []


def test_tl115_a_switch_after_the_pass_outside_a_loop_does_not(findings):
    src = HEAD + "model = models.resnet18()\nwith torch.no_grad():\n    out = model(x)\nmodel.eval()\n"
    assert [f.line for f in findings(src, "TL115")] == [6]


def test_tl115_train_then_no_grad_without_training_is_silent(findings):
    """Batch-norm recalibration: `.train()` right before a no_grad pass, with no backward, is deliberate."""
    src = HEAD + "def recal(model, loader):\n    model.train()\n    with torch.no_grad():\n        model(x)\n"
    assert findings(src, "TL115") == []


def test_tl115_model_of_unknown_mode_is_silent(findings):
    src = (
        HEAD + "from transformers import AutoModel\nmodel = AutoModel.from_pretrained('bert-base-uncased')\n"
        "loaded = torch.load('m.pt')\nwith torch.no_grad():\n    out = model(x)\n    out2 = loaded(x)\n"
    )
    assert findings(src, "TL115") == []


def test_tl115_validation_helper_called_in_train_mode_reports_the_call(findings, fixed):
    src = (
        HEAD + "def validate(net, xs):\n    with torch.no_grad():\n        return [net(x) for x in xs]\n"
        "model = models.resnet18()\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "for epoch in range(3):\n    for x in xs:\n        opt.zero_grad()\n        model(x).sum().backward()\n"
        "        opt.step()\n    score = validate(model, xs)\n"
    )
    (f,) = findings(src, "TL115")
    assert f.line == 15 and "validate(...)" in f.message
    out = fixed(src, "TL115")
    assert out.endswith("    model.eval()\n    score = validate(model, xs)\n    model.train()\n")


def test_tl115_helper_that_passes_the_model_on_is_not_a_pass(findings):
    src = (
        HEAD + "def validate(net, xs):\n    with torch.no_grad():\n        return run(net, xs)\n"
        "model = models.resnet18()\nscore = validate(model, xs)\n"
    )
    assert findings(src, "TL115") == []


def test_tl115_not_twice_for_nested_no_grad_blocks(findings):
    src = (
        HEAD + "model = models.resnet18()\nwith torch.no_grad():\n    with torch.inference_mode():\n"
        "        out = model(x)\n"
    )
    assert [f.line for f in findings(src, "TL115")] == [6]


def test_tl115_and_tl111_do_not_both_report(findings):
    """TL111 is `eval()` never undone; TL115 is no `eval()` at all: one program is never both."""
    src = (
        HEAD + "model = models.resnet18()\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "for epoch in range(3):\n    for x in xs:\n        opt.zero_grad()\n        model(x).sum().backward()\n"
        "        opt.step()\n    model.eval()\n    with torch.no_grad():\n        model(v)\n"
    )
    assert findings(src, "TL111") != [] and findings(src, "TL115") == []


@pytest.mark.parametrize(
    "init,flagged",
    [
        ("def init(m):\n    if isinstance(m, nn.Linear):\n        nn.init.zeros_(m.weight)\n", True),
        ("def init(m):\n    if isinstance(m, nn.BatchNorm2d):\n        m.eval()\n", False),
    ],
)
def test_tl115_apply_is_read_through_the_applied_function(init, flagged, findings):
    src = HEAD + init + "model = models.resnet18()\nmodel.apply(init)\nwith torch.no_grad():\n    out = model(x)\n"
    assert bool(findings(src, "TL115")) is flagged


@pytest.mark.parametrize(
    "switch,flagged",
    [
        ("self.net.eval()", False),
        ("self.net.train(False)", False),
        ("pass", True),
        ("self.net.apply(init)", True),
        ("# self.net.eval() is left to the caller\n        pass", True),  # a comment switches nothing
        ("self.hint = 'call self.net.eval() first'", True),  # nor does a string
        ("self.net.train(True)", True),
    ],
)
def test_tl115_a_module_whose_construction_switches_its_network_is_not_proven_in_training_mode(
    switch, flagged, findings
):
    # lpips.PerceptualLoss: __init__ builds a DistModel and calls its initialize(), which calls self.net.eval()
    src = (
        HEAD
        + "class DistModel:\n    def initialize(self, use_dropout):\n"
        + f"        self.net = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))\n        {switch}\n"
        + "class PerceptualLoss(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        + "        self.model = DistModel()\n        self.model.initialize(use_dropout=True)\n"
        + "    def forward(self, a, b):\n        return self.model.net(a - b)\n"
        + "percept = PerceptualLoss()\nwith torch.no_grad():\n    d = percept(x, y)\n"
    )
    assert bool(findings(src, "TL115")) is flagged


@pytest.mark.parametrize(
    "helper,flagged",
    [
        ("def log(net, other):\n    # net.eval() is the caller's job\n    print('.eval()', other)\n", True),
        ("def log(net, other):\n    other.eval()\n", True),  # another module is switched
        ("def log(net, other):\n    net.eval()\n", False),
        ("def log(net, other):\n    switch(net)\n", False),  # two calls deep
        ("def log(net, other):\n    switch(other)\n", True),
    ],
)
def test_tl115_a_helper_switches_what_its_code_switches(helper, flagged, findings):
    src = (
        HEAD + "def switch(m):\n    m.eval()\n" + helper + "model = models.resnet18()\nteacher = models.resnet18()\n"
        "log(model, teacher)\nwith torch.no_grad():\n    out = model(x)\n"
    )
    assert bool(findings(src, "TL115")) is flagged


@pytest.mark.parametrize(
    "switch,flagged",
    [("# net.eval() is the caller's job", True), ("ema.eval()", True), ("net.eval()", False), ("x.backward()", False)],
)
def test_tl115_a_validation_helper_is_read_per_parameter_from_its_tree(switch, flagged, findings):
    src = (
        HEAD
        + f"def validate(net, ema, xs):\n    {switch}\n    with torch.no_grad():\n        return [net(x) for x in xs]\n"
        "model = models.resnet18()\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "for epoch in range(3):\n    for x in xs:\n        opt.zero_grad()\n        model(x).sum().backward()\n"
        "        opt.step()\n    score = validate(model, ema, xs)\n"
    )
    assert bool(findings(src, "TL115")) is flagged


_ATTENTION = (
    "class Attn(nn.Module):\n"
    "    def __init__(self, d, dropout, rate=0.0):\n"
    "        super().__init__()\n"
    "        self.proj = nn.Linear(d, d)\n"
    "        self.drop = nn.Dropout(dropout)\n"
    "        self.extra = nn.Dropout(rate)\n"
    "    def forward(self, x):\n"
    "        return self.extra(self.drop(self.proj(x)))\n"
    "class Block(nn.Module):\n"
    "    def __init__(self, d, p):\n"
    "        super().__init__()\n"
    "        self.attn = Attn(d, dropout=p)\n"
    "    def forward(self, x):\n"
    "        return self.attn(x)\n"
)


@pytest.mark.parametrize(
    "build,flagged",
    [
        ("Attn(4, 0.0)", False),  # the constructor argument binds the dropout rate to 0.0, the default too
        ("Attn(4, dropout=0)", False),
        ("Block(4, 0.0)", False),  # bound through a project class that builds another
        ("Attn(4, 0.1)", True),
        ("Attn(4, 0.0, 0.2)", True),  # the second dropout's rate given
        ("Attn(4, rate)", True),  # a rate the analysis cannot read stays mode-dependent
        ("Attn(*args)", True),
        ("Block(4, 0.5)", True),
    ],
)
def test_tl115_dropout_rate_bound_at_the_instantiation(build, flagged, findings):
    src = HEAD + _ATTENTION + f"model = {build}\nwith torch.no_grad():\n    out = model(x)\n"
    assert bool(findings(src, "TL115")) is flagged


def test_tl115_a_reassigned_or_shadowed_parameter_is_not_bound(findings):
    src = (
        HEAD + "class Net(nn.Module):\n"
        "    def __init__(self, dropout):\n"
        "        super().__init__()\n"
        "        dropout = dropout + 0.1\n"
        "        self.drop = nn.Dropout(dropout)\n"
        "class Other(nn.Module):\n"
        "    def __init__(self, p):\n"
        "        super().__init__()\n"
        "        self.drops = nn.ModuleList([nn.Dropout(p) for p in (0.1, 0.2)])\n"
        "model = Net(0.0)\nother = Other(0.0)\nwith torch.no_grad():\n    out = model(x)\n    out2 = other(x)\n"
    )
    assert len(findings(src, "TL115")) == 2
