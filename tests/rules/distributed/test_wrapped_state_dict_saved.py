"""TL407 wrapped-state-dict-saved beyond its embedded examples."""

from __future__ import annotations


def test_tl407_class_attribute_wrapper(fixed):
    src = (
        "import torch\nfrom torch.nn.parallel import DistributedDataParallel\nclass T:\n"
        "    def __init__(self, net):\n        self.model = DistributedDataParallel(net)\n"
        "    def save(self):\n        torch.save(self.model.state_dict(), 'x.pt')\n"
    )
    out = fixed(src, "TL407")
    assert "torch.save(self.model.module.state_dict(), 'x.pt')" in out
