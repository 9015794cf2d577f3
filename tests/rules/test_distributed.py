"""Distributed and data-loading rules (TL401-TL407, TL501) beyond their embedded examples."""

from __future__ import annotations

from torchlint.engine import fix_text, lint_text
from torchlint.registry import rules

R = rules()
DDP = "from torch.nn.parallel import DistributedDataParallel as DDP\n"


def findings(src: str, code: str):
    return [f for f in lint_text("m.py", src, [R[code]]).findings if f.code == code]


def test_tl401_moving_the_wrapper_afterwards_is_reported_without_a_fix():
    src = DDP + "def main(rank):\n    model = DDP(Net())\n    model.to(rank)\n"
    (f,) = findings(src, "TL401")
    assert f.line == 3 and f.fix is None


def test_tl401_no_fix_when_the_device_is_defined_between():
    src = (
        DDP
        + "def main(rank):\n    model = Net()\n    ddp = DDP(model)\n    device = torch.device(rank)\n    model.to(device)\n"
    )
    (f,) = findings(src, "TL401")
    assert f.fix is None


def test_tl401_move_in_another_function_does_not_count():
    src = DDP + "def a(model):\n    return DDP(model)\ndef b(model):\n    model.cuda()\n"
    assert findings(src, "TL401") == []


def test_tl402_reports_once_and_respects_launchers():
    src = DDP + "from torch.utils.data import DistributedSampler\ns = DistributedSampler(ds)\nm = DDP(net)\n"
    assert len(findings(src, "TL402")) == 1
    assert findings("import lightning\n" + src, "TL402") == []
    assert findings(src + "torch.distributed.init_process_group('gloo')\n", "TL402") == []


def test_tl403_named_sampler_in_same_function_is_used_by_the_fix():
    src = (
        "from torch.utils.data import DataLoader, DistributedSampler\n"
        "def fit(ds):\n    s = DistributedSampler(ds)\n    dl = DataLoader(ds, sampler=s)\n"
        "    for ep in range(3):\n        for b in dl:\n            step(b)\n"
    )
    out = fix_text("m.py", src, [R["TL403"]]).text
    assert "    for ep in range(3):\n        s.set_epoch(ep)\n" in out


def test_tl403_while_epoch_loop_has_no_fix():
    src = (
        "from torch.utils.data import DataLoader, DistributedSampler\n"
        "dl = DataLoader(ds, sampler=DistributedSampler(ds))\nwhile not done:\n    for b in dl:\n        step(b)\n"
    )
    (f,) = findings(src, "TL403")
    assert f.line == 3 and f.fix is None


def test_tl404_positional_shuffle_is_reported_without_a_fix():
    src = "from torch.utils.data import DataLoader\ndl = DataLoader(ds, 32, True, sampler)\n"
    (f,) = findings(src, "TL404")
    assert f.fix is None


def test_tl405_lightning_strategy_object():
    src = "from lightning.pytorch.strategies import DDPStrategy\ns = DDPStrategy(find_unused_parameters=True)\n"
    assert [f.line for f in findings(src, "TL405")] == [2]


def test_tl407_class_attribute_wrapper():
    src = (
        "import torch\nfrom torch.nn.parallel import DistributedDataParallel\nclass T:\n"
        "    def __init__(self, net):\n        self.model = DistributedDataParallel(net)\n"
        "    def save(self):\n        torch.save(self.model.state_dict(), 'x.pt')\n"
    )
    out = fix_text("m.py", src, [R["TL407"]]).text
    assert "torch.save(self.model.module.state_dict(), 'x.pt')" in out


def test_tl501_keyword_num_workers_variable_is_silent():
    src = "from torch.utils.data import DataLoader\ndl = DataLoader(ds, num_workers=args.workers, persistent_workers=True)\n"
    assert findings(src, "TL501") == []
