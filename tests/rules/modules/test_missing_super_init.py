"""TL204 missing-super-init beyond its embedded examples."""

from __future__ import annotations


def test_tl204_only_init_methods_that_set_attributes(findings, fixed):
    quiet = "from torch import nn\nclass M(nn.Module):\n    def __init__(self):\n        pass\n"
    loud = (
        "from torch import nn\nclass M(nn.Module):\n    def __init__(self):\n        if True:\n            self.a = 1\n"
    )
    assert findings(quiet, "TL204") == []
    (f,) = findings(loud, "TL204")
    assert f.line == 3
    fixed = fixed(loud, "TL204")
    assert "    def __init__(self):\n        super().__init__()\n        if True:" in fixed
