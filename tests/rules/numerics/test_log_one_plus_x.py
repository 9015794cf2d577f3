"""TL801 log-one-plus-x beyond its embedded examples."""

from __future__ import annotations


def test_tl801_needs_torch_functions(findings):
    assert findings("import numpy as np\ny = np.log(1 + x)\n", "TL801") == []
