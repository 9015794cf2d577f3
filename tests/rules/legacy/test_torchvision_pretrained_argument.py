"""TL704 torchvision-pretrained-argument beyond its embedded examples."""

from __future__ import annotations


def test_tl704_non_literal_pretrained_gets_a_hint(findings):
    (f,) = findings("import torchvision\nm = torchvision.models.vgg16(pretrained=use_pt)\n", "TL704")
    assert f.fix is None and "if use_pt else None" in f.message
