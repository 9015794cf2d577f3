"""TL705 checkpoint-reentrant-unspecified beyond its embedded examples."""

from __future__ import annotations


def test_tl705_appends_after_existing_keywords(fixed):
    out = fixed("import torch\ny = torch.utils.checkpoint.checkpoint(f, x, preserve_rng_state=False)\n", "TL705")
    assert out.endswith("checkpoint(f, x, preserve_rng_state=False, use_reentrant=False)\n")
