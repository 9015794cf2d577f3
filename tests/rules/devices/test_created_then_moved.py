"""TL306 created-then-moved beyond its embedded examples."""

from __future__ import annotations

from torchlint.findings import Applicability

HEAD = "import torch\ndevice = torch.device('cuda')\n"


def test_random_factories_get_an_unsafe_fix_deterministic_ones_a_safe_one(findings):
    src = HEAD + "for _ in range(3):\n    a = torch.rand(4).to(device)\n    b = torch.eye(4).to(device)\n"
    assert [(f.line, f.fix.applicability) for f in findings(src, "TL306")] == [
        (4, Applicability.UNSAFE),
        (5, Applicability.SAFE),
    ]


def test_no_fix_when_both_calls_give_a_dtype_or_the_move_copies(findings):
    src = HEAD + (
        "for _ in range(3):\n"
        "    a = torch.zeros(4, dtype=torch.int64).to(device, torch.float16)\n"
        "    b = torch.ones(4).to(device, copy=True)\n"
        "    c = torch.ones(4).cuda(1)\n"
    )
    got = findings(src, "TL306")
    assert [f.line for f in got] == [4, 5, 6] and all(f.fix is None for f in got)


def test_keyword_device_and_dtype_are_carried_over(fixed):
    src = HEAD + "while True:\n    m = torch.full((2, 2), 0.5).to(device=device, dtype=torch.float16)\n"
    assert fixed(src, "TL306") == HEAD + (
        "while True:\n    m = torch.full((2, 2), 0.5, device=device, dtype=torch.float16)\n"
    )


def test_outside_forward_and_loops_or_in_init_is_silent(findings):
    src = HEAD + (
        "mask = torch.ones(3).to(device)\n"
        "def helper():\n    return torch.ones(3).to(device)\n"
        "for _ in range(2):\n    def inner():\n        return torch.ones(3).to(device)\n"
    )
    assert findings(src, "TL306") == []


def test_a_device_variable_is_proven_by_its_assignment_not_its_name(findings):
    src = "import torch\nfor x in xs:\n    y = torch.zeros(3).to(device)\n"  # `device` is never assigned
    assert findings(src, "TL306") == []


def test_a_cast_in_the_move_makes_the_fix_unsafe(findings):
    src = HEAD + "for _ in range(3):\n    a = torch.arange(0, 1, 0.1).to(device, torch.float16)\n"
    assert [f.fix.applicability for f in findings(src, "TL306")] == [Applicability.UNSAFE]
