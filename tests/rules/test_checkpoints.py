"""Checkpoint rules (TL601-TL603) beyond their embedded examples."""

from __future__ import annotations

import libcst as cst

from torchlint.engine import fix_text, lint_text
from torchlint.registry import rules

R = rules()


def findings(src: str, code: str):
    return [f for f in lint_text("m.py", src, [R[code]]).findings if f.code == code]


def test_tl601_keeps_a_trailing_comma_layout_parseable():
    src = 'import torch\nsd = torch.load(\n    "m.pt",\n    map_location="cpu",\n)\n'
    out = fix_text("m.py", src, [R["TL601"]]).text
    cst.parse_module(out)
    assert "weights_only=True" in out and findings(out, "TL601") == []


def test_tl602_underscore_binding_is_still_discarded():
    src = "_ = model.load_state_dict(sd, strict=False)\n"
    assert len(findings(src, "TL602")) == 1


def test_tl602_result_read_in_the_same_function_is_fine():
    src = "def f(m, sd):\n    incompatible = m.load_state_dict(sd, strict=False)\n    assert not incompatible.unexpected_keys\n"
    assert findings(src, "TL602") == []


def test_tl602_fix_not_offered_for_unknown_receivers():
    src = "ema.load_state_dict(sd, strict=False)\n"
    (f,) = findings(src, "TL602")
    assert f.fix is None


def test_tl603_state_dict_tensors_and_parameters_are_not_modules():
    src = (
        "import torch\nx = torch.zeros(3)\nw = torch.nn.Parameter(x)\ntorch.save(x, 'x.pt')\n"
        "torch.save(w, 'w.pt')\ntorch.save(model.state_dict(), 'm.pt')\n"
    )
    assert findings(src, "TL603") == []
