"""TL112 gradscaler-bypassed beyond its embedded examples."""

from __future__ import annotations

from torchlint.findings import Applicability

HEAD = "import torch\nscaler = torch.amp.GradScaler('cuda')\nopt = torch.optim.SGD(params, lr=0.1)\n"


def test_tl112_direct_step_without_update_gives_two_findings(findings):
    src = HEAD + "for x in loader:\n    scaler.scale(f(x)).backward()\n    opt.step()\n"
    found = sorted((f.line, f.fix.applicability) for f in findings(src, "TL112"))
    assert found == [(5, Applicability.SAFE), (6, Applicability.UNSAFE)]


def test_tl112_both_fixes_together_give_the_amp_recipe(fixed):
    src = HEAD + "for x in loader:\n    scaler.scale(f(x)).backward()\n    opt.step()\n"
    assert fixed(src, "TL112") == HEAD + (
        "for x in loader:\n    scaler.scale(f(x)).backward()\n    scaler.step(opt)\n    scaler.update()\n"
    )


def test_tl112_update_in_a_local_helper_counts(findings):
    src = (
        HEAD + "def finish():\n    scaler.step(opt)\n    scaler.update()\n"
        "for x in loader:\n    scaler.scale(f(x)).backward()\n    finish()\n"
    )
    assert findings(src, "TL112") == []


def test_tl112_update_only_once_per_epoch_is_reported(findings):
    src = (
        HEAD + "for epoch in range(3):\n    for x in loader:\n        scaler.scale(f(x)).backward()\n"
        "        scaler.step(opt)\n    scaler.update()\n"
    )
    assert [f.line for f in findings(src, "TL112")] == [6]


def test_tl112_an_unscaled_backward_in_the_loop_is_silent(findings):
    # a second model trained without the scaler: its optimizer may step directly
    src = (
        HEAD + "d_opt = torch.optim.SGD(d_params, lr=0.1)\nfor x in loader:\n"
        "    scaler.scale(f(x)).backward()\n    scaler.step(opt)\n    scaler.update()\n"
        "    g(x).backward()\n    d_opt.step()\n"
    )
    assert findings(src, "TL112") == []


def test_tl112_unknown_scaler_is_silent(findings):
    src = "def run(scaler, opt, loader):\n    for x in loader:\n        scaler.scale(f(x)).backward()\n        opt.step()\n"
    assert findings(src, "TL112") == []


def test_tl112_accumulation_loop_inside_the_stepping_loop_is_silent(findings):
    src = (
        HEAD + "while True:\n    for micro in range(4):\n        scaler.scale(f(micro)).backward()\n"
        "    scaler.step(opt)\n    scaler.update()\n    opt.zero_grad()\n"
    )
    assert findings(src, "TL112") == []
