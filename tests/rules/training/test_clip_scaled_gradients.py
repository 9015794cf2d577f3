"""TL108 clip-scaled-gradients beyond its embedded examples."""

from __future__ import annotations

HEAD = "import torch\nscaler = torch.amp.GradScaler('cuda')\nopt = torch.optim.SGD(params, lr=0.1)\n"


def test_tl108_accumulation_in_an_inner_loop_then_clip(findings):
    src = HEAD + (
        "while True:\n    for micro in range(4):\n        scaler.scale(f(micro)).backward()\n"
        "    torch.nn.utils.clip_grad_norm_(params, 1.0)\n    scaler.step(opt)\n    scaler.update()\n"
    )
    assert [f.line for f in findings(src, "TL108")] == [7]


def test_tl108_clip_before_the_backward_is_silent(findings):
    src = HEAD + (
        "for x in loader:\n    torch.nn.utils.clip_grad_norm_(params, 1.0)\n"
        "    scaler.scale(f(x)).backward()\n    scaler.step(opt)\n    scaler.update()\n"
    )
    assert findings(src, "TL108") == []


def test_tl108_library_clip_that_unscales_itself_is_silent(findings):
    src = (
        "from accelerate import Accelerator\naccelerator = Accelerator()\n"
        "for x in loader:\n    accelerator.backward(f(x))\n    accelerator.clip_grad_norm_(params, 1.0)\n"
    )
    assert findings(src, "TL108") == []


def test_tl108_two_optimizers_get_no_fix(findings):
    src = HEAD + (
        "opt2 = torch.optim.SGD(params2, lr=0.1)\nfor x in loader:\n    scaler.scale(f(x)).backward()\n"
        "    torch.nn.utils.clip_grad_value_(params, 1.0)\n    scaler.step(opt)\n    scaler.step(opt2)\n"
        "    scaler.update()\n"
    )
    [f] = findings(src, "TL108")
    assert f.fix is None


def test_tl108_unscale_in_a_local_helper_before_the_clip_counts(findings):
    src = HEAD + (
        "def unscale():\n    scaler.unscale_(opt)\n"
        "for x in loader:\n    scaler.scale(f(x)).backward()\n    unscale()\n"
        "    torch.nn.utils.clip_grad_norm_(params, 1.0)\n    scaler.step(opt)\n    scaler.update()\n"
    )
    assert findings(src, "TL108") == []
