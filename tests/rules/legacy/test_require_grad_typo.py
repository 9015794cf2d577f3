"""TL706 require-grad-typo beyond its embedded examples."""

from __future__ import annotations


def test_tl706_only_assignments(findings):
    assert findings("if p.require_grad:\n    pass\n", "TL706") == []
