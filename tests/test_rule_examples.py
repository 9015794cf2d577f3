"""Every rule's embedded VALID/INVALID examples, run through the real engine."""

from __future__ import annotations

import libcst as cst
import pytest

from torchlint.engine import fix_text, lint_text
from torchlint.registry import rules

CATALOGUE = rules()
VALID = [(code, i, src) for code, cls in CATALOGUE.items() for i, src in enumerate(cls.VALID)]
INVALID = [(code, i, ex) for code, cls in CATALOGUE.items() for i, ex in enumerate(cls.INVALID)]


@pytest.mark.parametrize("code,i,src", VALID, ids=[f"{c}-valid-{i}" for c, i, _ in VALID])
def test_valid_is_silent(code, i, src):
    findings = lint_text("example.py", src, [CATALOGUE[code]]).findings
    assert findings == [], [f"{f.line}:{f.column} {f.code} {f.message}" for f in findings]


@pytest.mark.parametrize("code,i,ex", INVALID, ids=[f"{c}-invalid-{i}" for c, i, _ in INVALID])
def test_invalid_is_reported(code, i, ex):
    findings = lint_text("example.py", ex.source, [CATALOGUE[code]], torch_version=ex.torch_version).findings
    assert [f.code for f in findings] == [code], [f"{f.line}: {f.message}" for f in findings]
    if ex.line is not None:
        assert findings[0].line == ex.line
    if ex.fixed is not None:
        result = fix_text("example.py", ex.source, [CATALOGUE[code]], torch_version=ex.torch_version)
        assert result.text == ex.fixed
        cst.parse_module(result.text)
        again = fix_text("example.py", result.text, [CATALOGUE[code]], torch_version=ex.torch_version)
        assert again.applied == 0 and again.text == result.text


@pytest.mark.parametrize("code", list(CATALOGUE))
def test_rule_is_documented(code):
    cls = CATALOGUE[code]
    for attr in ("name", "message", "summary", "what", "why", "example"):
        assert getattr(cls, attr, "").strip(), f"{code} lacks {attr}"
    assert cls.VALID and cls.INVALID, f"{code} needs VALID and INVALID examples"
    if cls.fixable():
        assert cls.fix_example.strip(), f"{code} is fixable but shows no fixed example"
        assert any(ex.fixed is not None for ex in cls.INVALID), f"{code}: no INVALID example checks its fix"
    # the documented example itself must trigger the rule
    assert [f.code for f in lint_text("example.py", cls.example, [cls]).findings] == [code]
