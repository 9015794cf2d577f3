"""TL703 tensor-data-attribute beyond its embedded examples."""

from __future__ import annotations


def test_tl703_parameter_loop_outside_training_is_silent(findings):
    src = "def count(model):\n    for p in model.parameters():\n        n = p.data.numel()\n"
    assert findings(src, "TL703") == []
