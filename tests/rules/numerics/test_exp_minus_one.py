"""TL802 exp-minus-one beyond its embedded examples."""

from __future__ import annotations


def test_tl802_needs_torch_functions(findings):
    assert findings("import numpy as np\ny = np.exp(x) - 1\n", "TL802") == []
    assert len(findings("from torch import exp\ny = exp(x) - 1\n", "TL802")) == 1
