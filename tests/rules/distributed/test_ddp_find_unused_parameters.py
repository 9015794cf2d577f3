"""TL405 ddp-find-unused-parameters beyond its embedded examples."""

from __future__ import annotations


def test_tl405_lightning_strategy_object(findings):
    src = "from lightning.pytorch.strategies import DDPStrategy\ns = DDPStrategy(find_unused_parameters=True)\n"
    assert [f.line for f in findings(src, "TL405")] == [2]
