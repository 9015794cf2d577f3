"""TL705 checkpoint-reentrant-unspecified beyond its embedded examples."""

from __future__ import annotations


def test_tl705_appends_after_existing_keywords(fixed):
    out = fixed("import torch\ny = torch.utils.checkpoint.checkpoint(f, x, preserve_rng_state=False)\n", "TL705")
    assert out.endswith("checkpoint(f, x, preserve_rng_state=False, use_reentrant=False)\n")


def test_tl705_positional_use_reentrant_of_checkpoint_sequential_is_passed(findings):
    # its fourth parameter: adding `use_reentrant=False` gave "multiple values" (TypeError)
    src = "import torch.utils.checkpoint as cp\ny = cp.checkpoint_sequential(layers, 2, x, True)\n"
    assert findings(src, "TL705") == []


def test_tl705_checkpoint_args_and_unknown_keywords_bind(findings):
    src = "from torch.utils.checkpoint import checkpoint\nh = checkpoint(block, x, mask, preserve_rng_state=False)\n"
    (f,) = findings(src, "TL705")
    assert f.fix is not None
