"""TL120 inplace-on-leaf beyond its embedded examples."""

from __future__ import annotations

from torchlint.findings import Applicability


def test_tl120_requires_grad_marked_after_creation(findings):
    src = "import torch\nw = torch.zeros(3)\nw.requires_grad_()\nw.add_(1)\n"
    assert [f.line for f in findings(src, "TL120")] == [4]


def test_tl120_inference_mode_and_decorated_functions_are_silent(findings):
    src = (
        "import torch\nw = torch.zeros(3, requires_grad=True)\n"
        "with torch.inference_mode():\n    w.add_(1)\n"
        "@torch.no_grad()\ndef reset():\n    v = torch.ones(2, requires_grad=True)\n    v.zero_()\n"
    )
    assert findings(src, "TL120") == []


def test_tl120_rebound_to_a_non_leaf_is_silent(findings):
    src = "import torch\nw = torch.zeros(3, requires_grad=True)\nw = w * 2\nw += 1\n"
    assert findings(src, "TL120") == []


def test_tl120_layer_built_with_bias_off_is_silent_for_bias_only(findings):
    src = "from torch import nn\nfc = nn.Linear(2, 2, bias=False)\nfc.bias.zero_()\nfc.weight.zero_()\n"
    assert [f.line for f in findings(src, "TL120")] == [4]


def test_tl120_project_module_attribute_is_silent(findings):
    # `model.weight` of a module of unknown class: the attribute may be a buffer
    src = "from net import Net\nmodel = Net()\nmodel.weight.fill_(0)\n"
    assert findings(src, "TL120") == []


def test_tl120_statement_doing_more_gets_a_display_fix(findings):
    src = "import torch\nw = torch.zeros(3, requires_grad=True)\ny = w.add_(1) * 2\n"
    [f] = findings(src, "TL120")
    assert f.fix is not None and f.fix.applicability is Applicability.DISPLAY


def test_tl120_self_attribute_not_always_a_parameter_is_silent(findings):
    src = (
        "import torch\nfrom torch import nn\nclass M(nn.Module):\n"
        "    def __init__(self, w=None):\n        super().__init__()\n        self.w = nn.Parameter(torch.ones(2))\n"
        "    def load(self, t):\n        self.w = t\n"
        "    def forward(self, x):\n        self.w.mul_(2)\n        return x\n"
    )
    assert findings(src, "TL120") == []


def test_tl120_fix_keeps_the_indentation_of_a_nested_statement(fixed):
    src = (
        "import torch\nw = torch.zeros(3, requires_grad=True)\n"
        "for _ in range(2):\n    if flag:\n        w[0] = 1.0  # reset\n"
    )
    assert fixed(src, "TL120") == (
        "import torch\nw = torch.zeros(3, requires_grad=True)\n"
        "for _ in range(2):\n    if flag:\n        with torch.no_grad():\n            w[0] = 1.0  # reset\n"
    )


def test_tl120_a_module_frozen_in_code_is_silent_one_frozen_in_a_comment_is_not(findings):
    src = "from torch import nn\nfc = nn.Linear(2, 2)\n{}\nfc.weight.zero_()\n"
    assert findings(src.format("fc.requires_grad_(False)"), "TL120") == []
    assert findings(src.format("fc.weight.requires_grad = False"), "TL120") == []
    assert [f.line for f in findings(src.format("# fc.requires_grad_(False) was tried here"), "TL120")] == [4]


BLOCK = """\
from torch import nn

class Unit(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def load_from(self, w):
        self.fc.weight.copy_(w)
"""


def _project_findings(tmp_path, model: str, script: str) -> list[int]:
    from torchlint.engine import lint_text
    from torchlint.registry import rules

    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    for name, text in {"block.py": BLOCK, "model.py": model, "train.py": script}.items():
        (tmp_path / name).write_text(text)
    return [f.line for f in lint_text(str(tmp_path / "block.py"), BLOCK, [rules()["TL120"]]).findings]


MODEL = """\
import torch
from torch import nn

class Net(nn.Module):
    def load_from(self, w):
        with torch.no_grad():
            for name, unit in self.named_children():
                unit.load_from(w)
"""


def test_tl120_method_whose_every_possible_caller_turns_autograd_off_is_silent(tmp_path):
    # its only callers: `unit.load_from(...)` (receiver of unknown class) in another file, under no_grad; the
    # script's `net.load_from(...)` is Net's own method (ViT-pytorch's PreActBottleneck.load_from)
    script = "from model import Net\nnet = Net()\nnet.load_from(None)\n"
    assert _project_findings(tmp_path, MODEL, script) == []


def test_tl120_method_with_a_possible_caller_outside_no_grad_is_reported(tmp_path):
    script = "def load(m, w):\n    m.load_from(w)\n"
    assert _project_findings(tmp_path, MODEL, script) == [9]
