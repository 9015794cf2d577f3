"""TL602 unchecked-non-strict-load beyond its embedded examples."""

from __future__ import annotations


def test_tl602_underscore_binding_is_still_discarded(findings):
    src = "_ = model.load_state_dict(sd, strict=False)\n"
    assert len(findings(src, "TL602")) == 1


def test_tl602_result_read_in_the_same_function_is_fine(findings):
    src = "def f(m, sd):\n    incompatible = m.load_state_dict(sd, strict=False)\n    assert not incompatible.unexpected_keys\n"
    assert findings(src, "TL602") == []


def test_tl602_fix_not_offered_for_unknown_receivers(findings):
    src = "ema.load_state_dict(sd, strict=False)\n"
    (f,) = findings(src, "TL602")
    assert f.fix is None
