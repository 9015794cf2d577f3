"""The device rules' fixes applied together to one buggy program."""

from __future__ import annotations

import libcst as cst

from fixture_expectations import FIXTURES
from torchlint.engine import fix_text
from torchlint.registry import rules


def test_device_rules_fix_the_buggy_fixture_and_reparse():
    path = FIXTURES / "devices" / "buggy_gpu_training.py"
    classes = [rules()[c] for c in ("TL301", "TL302", "TL304", "TL305")]
    out = fix_text(str(path), path.read_text(encoding="utf-8"), classes, unsafe=True)  # TL301's may be unsafe
    cst.parse_module(out.text)
    assert out.applied == 4 and out.remaining == []
