"""TL201 tensor-attribute-not-registered beyond its embedded examples."""

from __future__ import annotations


def test_tl201_offers_buffer_and_parameter_fixes_spelled_like_the_file(findings):
    src = "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.w = torch.randn(3)\n"
    (f,) = findings(src, "TL201")
    assert 'self.register_buffer("w", torch.randn(3))' in f.fix.edits[0].content
    assert [a.edits[0].content for a in f.alternatives] == ["nn.Parameter(torch.randn(3))"]


def test_tl201_ignores_forward_and_non_factory_values(findings):
    src = "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def __init__(self, t):\n        super().__init__()\n        self.t = t\n        self.n = torch.nn.Linear(2, 2)\n"
    assert findings(src, "TL201") == []
