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


_CACHE = """\
import torch
from torch import nn
class Rotary(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.cache = torch.zeros(4)
    def forward(self, x):
        if self.cache.numel() != x.size(-1):
            self.cache = torch.arange(x.size(-1)).float()
        return self.proj(x) + self.cache
"""


def test_tl201_cache_forward_rebuilds_becomes_a_non_persistent_buffer():
    # issue 27: `register_buffer` for a cache that forward rebuilds added unexpected checkpoint keys
    import torch

    from torchlint.engine import fix_text
    from torchlint.registry import rules

    out = fix_text("m.py", _CACHE, [rules()["TL201"]]).text
    assert 'self.register_buffer("cache", torch.zeros(4), persistent=False)' in out
    before, after = {}, {}
    exec(_CACHE, before)
    exec(out, after)
    torch.manual_seed(0)
    old = before["Rotary"]()
    torch.manual_seed(0)
    new = after["Rotary"]()
    assert list(old.state_dict()) == list(new.state_dict())
    x = torch.randn(2, 4)
    assert torch.equal(old(x), new(x))
