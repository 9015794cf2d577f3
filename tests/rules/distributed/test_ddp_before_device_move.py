"""TL401 ddp-before-device-move beyond its embedded examples."""

from __future__ import annotations

DDP = "from torch.nn.parallel import DistributedDataParallel as DDP\n"


def test_tl401_moving_the_wrapper_afterwards_is_reported_without_a_fix(findings):
    src = DDP + "def main(rank):\n    model = DDP(Net())\n    model.to(rank)\n"
    (f,) = findings(src, "TL401")
    assert f.line == 3 and f.fix is None


def test_tl401_no_fix_when_the_device_is_defined_between(findings):
    src = (
        DDP
        + "def main(rank):\n    model = Net()\n    ddp = DDP(model)\n    device = torch.device(rank)\n    model.to(device)\n"
    )
    (f,) = findings(src, "TL401")
    assert f.fix is None


def test_tl401_move_in_another_function_does_not_count(findings):
    src = DDP + "def a(model):\n    return DDP(model)\ndef b(model):\n    model.cuda()\n"
    assert findings(src, "TL401") == []


def test_tl401_a_move_after_the_wrap_of_a_model_moved_before_it_is_harmless(findings):
    src = (
        "import torch\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n"
        "def train(rank, device):\n    generator = Generator().to(device)\n"
        "    generator = DDP(generator, device_ids=[rank]).to(device)\n"
    )
    assert findings(src, "TL401") == []
    unmoved = src.replace("Generator().to(device)", "Generator()")
    assert [f.line for f in findings(unmoved, "TL401")] == [5]
