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


def test_tl407_a_copy_between_live_models_is_no_loader_of_the_checkpoint(findings):
    # dino: the function that saves {'student': student.state_dict(), ...} also copies the student into the
    # bare teacher; that copy names no file and reads no checkpoint, so it says nothing about the consumer
    src = (
        "import torch\nfrom torch.nn.parallel import DistributedDataParallel\n"
        "def train(student, teacher):\n"
        "    student = DistributedDataParallel(student)\n"
        "    teacher = torch.nn.Linear(4, 2)\n"
        "    teacher.load_state_dict(student.module.state_dict())\n"
        "    torch.save({'student': student.state_dict()}, 'checkpoint.pth')\n"
    )
    assert findings(src, "TL407") == []
    # the same function loading the checkpoint's 'student' entry into the bare model is still a consumer
    loading = src + "    teacher.load_state_dict(torch.load('checkpoint.pth')['student'])\n"
    assert [f.line for f in findings(loading, "TL407")] == [7]
