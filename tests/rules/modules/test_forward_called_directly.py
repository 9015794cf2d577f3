"""TL203 forward-called-directly beyond its embedded examples."""

from __future__ import annotations


def test_tl203_ignores_explicit_base_class_calls_and_unknown_receivers(findings):
    src = "import torch\nclass A(torch.nn.Module):\n    def forward(self, x):\n        return torch.nn.Module.forward(self, x)\nout = thing.forward(1)\n"
    assert findings(src, "TL203") == []
