"""TL202 modules-in-plain-container beyond its embedded examples."""

from __future__ import annotations

import libcst as cst
import pytest


def test_tl202_tuple_of_modules_becomes_a_module_list(fixed):
    src = "import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.pair = (nn.Linear(2, 2), nn.Linear(2, 2))\n"
    out = fixed(src, "TL202")
    assert "self.pair = nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2)])" in out
    cst.parse_module(out)


def test_tl202_mixed_or_non_module_containers_are_silent(findings):
    src = (
        "import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self, cfg):\n        super().__init__()\n"
        "        self.mixed = [nn.Linear(2, 2), 3]\n        self.sizes = [cfg.a, cfg.b]\n        self.acts = []\n"
        "        self.acts.append('relu')\n"
    )
    assert findings(src, "TL202") == []


def test_tl202_dict_filled_later_needs_module_dict(findings):
    src = (
        "from torch import nn\nclass M(nn.Module):\n    def __init__(self, names):\n        super().__init__()\n"
        "        self.heads = {}\n        self.heads.update(x=1)\n        self.layers = []\n"
        "        self.layers.extend([nn.Linear(1, 1)])\n"
    )
    # `extend([...])` passes a list, not a module: we do not guess
    assert findings(src, "TL202") == []


def test_tl202_a_container_used_in_forward_is_still_reported(findings):
    """Only a method other than `forward` returning the container proves the class hands it out."""
    src = (
        "from torch import nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.layers = [nn.Linear(2, 2), nn.Linear(2, 2)]\n    def forward(self, x):\n"
        "        return self.layers[-1](self.layers[0](x))\n    def first(self):\n        return self.layers[0](1)\n"
    )
    assert [f.line for f in findings(src, "TL202")] == [5]


def test_tl202_display_only_when_the_class_also_registers_children_by_hand(findings):
    # issue 27: a ModuleList over layers also set with setattr put every layer twice in the state_dict
    src = (
        "from torch import nn\nclass Net(nn.Module):\n    def __init__(self, n):\n        super().__init__()\n"
        "        self.layers = []\n        for i in range(n):\n            layer = nn.Linear(2, 2)\n"
        "            self.keep(i, layer)\n            self.layers.append(layer)\n"
        "    def keep(self, i, layer):\n        setattr(self, f'layer{i}', layer)\n"
    )
    (f,) = findings(src, "TL202")
    assert f.fix is not None and f.fix.applicability.value == "display"


@pytest.mark.parametrize(
    "register",
    [
        "setattr(self, f'layer{i}', layer)",
        "self.add_module(f'layer{i}', layer)",
        "self.register_module('l%i' % i, layer)",
    ],
)
@pytest.mark.parametrize("listed", ["self.layers.append(layer)", "self.layers = [layer]"])
def test_tl202_a_list_of_modules_init_registers_by_name_is_an_alias(register, listed, findings):
    # issue 26: every layer of the plain list is also a registered child: its parameters are the model's
    src = (
        "from torch import nn\nclass Net(nn.Module):\n    def __init__(self, n):\n        super().__init__()\n"
        "        self.layers = []\n        for i in range(n):\n            layer = nn.Linear(2, 2)\n"
        f"            {register}\n            {listed}\n"
    )
    assert findings(src, "TL202") == []
    if register.startswith("setattr"):  # (an add_module anywhere in __init__ silences it all, as before)
        # a different module registered by name: the listed layer is not
        other = src.replace(register, register.replace("layer)", "nn.Linear(2, 2))"))
        assert [f.line for f in findings(other, "TL202")] == [5 if "append" in listed else 9]


def test_tl202_fix_is_unsafe_as_it_changes_the_state_dict_keys(findings):
    # issue 27: registering the list adds its modules' keys to the state_dict, so a checkpoint saved
    # before no longer loads strictly; found as a safe hunk on an unseen repository
    pytest.importorskip("torch")
    src = """\
from torch import nn
class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = [nn.Linear(3, 4), nn.ReLU()]
        self.out = nn.Linear(4, 1)
    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.out(x)
"""
    (f,) = findings(src, "TL202")
    assert f.fix.applicability.value == "unsafe" and "checkpoints" in f.fix.risk
    before, after = {}, {}
    exec(src, before)
    exec(src.replace("[nn.Linear(3, 4), nn.ReLU()]", "nn.ModuleList([nn.Linear(3, 4), nn.ReLU()])"), after)
    saved = before["Head"]().state_dict()
    with pytest.raises(RuntimeError, match="Missing key"):
        after["Head"]().load_state_dict(saved)


def test_tl202_a_lookup_table_handed_out_through_a_local_is_silent(findings):
    # SimCLR: the chosen backbone is returned and registered as self.backbone; the dict is only a lookup table
    src = (
        "from torch import nn\nclass M(nn.Module):\n    def __init__(self, name):\n        super().__init__()\n"
        "        self.table = {'a': nn.Linear(2, 2), 'b': nn.Linear(2, 3)}\n"
        "        self.backbone = self._pick(name)\n"
        "    def _pick(self, name):\n        model = self.table[name]\n        return RET\n"
    )
    assert findings(src.replace("RET", "model"), "TL202") == []
    # a local that holds something else hands nothing of the table out
    assert [f.line for f in findings(src.replace("RET", "name"), "TL202")] == [5]
