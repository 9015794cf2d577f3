"""TL601 torch-load-without-weights-only beyond its embedded examples."""

from __future__ import annotations

import libcst as cst


def test_tl601_keeps_a_trailing_comma_layout_parseable(findings, fixed):
    src = 'import torch\nsd = torch.load(\n    "m.pt",\n    map_location="cpu",\n)\n'
    out = fixed(src, "TL601")
    cst.parse_module(out)
    assert "weights_only=True" in out and findings(out, "TL601") == []
