"""Every unsafe fix says what it may change: the editor puts it in the quick fix's title (issue 27 item 5)."""

from __future__ import annotations

import pytest

from torchlint.engine import lint_text
from torchlint.findings import Applicability
from torchlint.registry import rules

CATALOGUE = rules()
INVALID = [(code, i, ex) for code, cls in CATALOGUE.items() for i, ex in enumerate(cls.INVALID)]


@pytest.mark.parametrize("code,i,ex", INVALID, ids=[f"{c}-invalid-{i}" for c, i, _ in INVALID])
def test_unsafe_fix_names_its_risk(code, i, ex):
    for f in lint_text("example.py", ex.source, [CATALOGUE[code]], torch_version=ex.torch_version).findings:
        for fx in (f.fix, *f.alternatives):
            if fx is not None and fx.applicability is Applicability.UNSAFE:
                assert fx.risk, f"{code}: unsafe fix {fx.message!r} does not say what it may change"
