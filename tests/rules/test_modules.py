"""nn.Module definition rules (TL201-TL204) beyond their embedded examples."""

from __future__ import annotations

import libcst as cst

from torchlint.engine import fix_text, lint_text
from torchlint.registry import rules

R = rules()


def findings(src: str, code: str):
    return [f for f in lint_text("m.py", src, [R[code]]).findings if f.code == code]


def test_tl201_offers_buffer_and_parameter_fixes_spelled_like_the_file():
    src = "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.w = torch.randn(3)\n"
    (f,) = findings(src, "TL201")
    assert 'self.register_buffer("w", torch.randn(3))' in f.fix.edits[0].content
    assert [a.edits[0].content for a in f.alternatives] == ["nn.Parameter(torch.randn(3))"]


def test_tl201_ignores_forward_and_non_factory_values():
    src = "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def __init__(self, t):\n        super().__init__()\n        self.t = t\n        self.n = torch.nn.Linear(2, 2)\n"
    assert findings(src, "TL201") == []


def test_tl202_tuple_of_modules_becomes_a_module_list():
    src = "import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.pair = (nn.Linear(2, 2), nn.Linear(2, 2))\n"
    out = fix_text("m.py", src, [R["TL202"]]).text
    assert "self.pair = nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2)])" in out
    cst.parse_module(out)


def test_tl202_mixed_or_non_module_containers_are_silent():
    src = (
        "import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self, cfg):\n        super().__init__()\n"
        "        self.mixed = [nn.Linear(2, 2), 3]\n        self.sizes = [cfg.a, cfg.b]\n        self.acts = []\n"
        "        self.acts.append('relu')\n"
    )
    assert findings(src, "TL202") == []


def test_tl202_dict_filled_later_needs_module_dict():
    src = (
        "from torch import nn\nclass M(nn.Module):\n    def __init__(self, names):\n        super().__init__()\n"
        "        self.heads = {}\n        self.heads.update(x=1)\n        self.layers = []\n"
        "        self.layers.extend([nn.Linear(1, 1)])\n"
    )
    # `extend([...])` passes a list, not a module: we do not guess
    assert findings(src, "TL202") == []


def test_tl203_ignores_explicit_base_class_calls_and_unknown_receivers():
    src = "import torch\nclass A(torch.nn.Module):\n    def forward(self, x):\n        return torch.nn.Module.forward(self, x)\nout = thing.forward(1)\n"
    assert findings(src, "TL203") == []


def test_tl204_only_init_methods_that_set_attributes():
    quiet = "from torch import nn\nclass M(nn.Module):\n    def __init__(self):\n        pass\n"
    loud = (
        "from torch import nn\nclass M(nn.Module):\n    def __init__(self):\n        if True:\n            self.a = 1\n"
    )
    assert findings(quiet, "TL204") == []
    (f,) = findings(loud, "TL204")
    assert f.line == 3
    fixed = fix_text("m.py", loud, [R["TL204"]]).text
    assert "    def __init__(self):\n        super().__init__()\n        if True:" in fixed
