"""TL407 wrapped-state-dict-saved beyond its embedded examples."""

from __future__ import annotations

from torchlint.engine.core.source import apply_edits


def test_tl407_class_attribute_wrapper(findings):
    src = (
        "import torch\nfrom torch.nn.parallel import DistributedDataParallel\nclass T:\n"
        "    def __init__(self, net):\n        self.model = DistributedDataParallel(net)\n"
        "    def save(self):\n        torch.save(self.model.state_dict(), 'x.pt')\n"
        # the project's loader of x.pt takes the bare model (TL407 needs one)
        "    def export(self):\n        bare = torch.nn.Linear(4, 2)\n        bare.load_state_dict(torch.load('x.pt'))\n"
    )
    (f,) = findings(src, "TL407")
    assert f.fix is not None and "self.model.module" in apply_edits(src, f.fix.edits)


def test_tl407_fix_is_display_only(findings):
    # issue 27: `model.module` raised on a model that is only sometimes wrapped
    src = (
        "import torch\nmodel = torch.nn.parallel.DistributedDataParallel(net, device_ids=[rank])\n"
        'torch.save(model.state_dict(), "ckpt.pt")\n'
        'bare = torch.nn.Linear(4, 2)\nbare.load_state_dict(torch.load("ckpt.pt"))\n'
    )
    (f,) = findings(src, "TL407")
    assert f.fix is not None and f.fix.applicability.value == "display"
