"""TL404 dataloader-shuffle-with-sampler beyond its embedded examples."""

from __future__ import annotations


def test_tl404_positional_shuffle_is_reported_without_a_fix(findings):
    src = "from torch.utils.data import DataLoader\ndl = DataLoader(ds, 32, True, sampler)\n"
    (f,) = findings(src, "TL404")
    assert f.fix is None
