"""TL302 module-partially-moved beyond its embedded examples."""

from __future__ import annotations


def test_tl302_whole_model_moved_elsewhere_is_fine(findings):
    src = "model = Net()\nmodel.head.to(device)\nmodel = model.to(device)\nout = model(x)\n"
    assert findings(src, "TL302") == []
