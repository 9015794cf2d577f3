"""Every rule's embedded VALID/INVALID examples, run through the real engine.

The contract for an INVALID example (Fixit's `validate_patch` is the model):
exactly one finding of the rule, at the pinned line/column with the pinned message
when given, no unformatted `{placeholder}` left in its message or fix titles, and
every fix it offers pinned: `fixed` is the text after its fix, `alternatives` the
text after each alternative fix. `--fix` must apply the fix exactly as far as its
applicability allows, reach the pinned text and be a no-op the second time.
"""

from __future__ import annotations

import re

import libcst as cst
import pytest

from torchlint.engine import fix_text, lint_text
from torchlint.engine.core.source import apply_edits
from torchlint.engine.rule import Invalid
from torchlint.findings import Finding, Fix
from torchlint.registry import rules

CATALOGUE = rules()
VALID = [(code, i, src) for code, cls in CATALOGUE.items() for i, src in enumerate(cls.VALID)]
INVALID = [(code, i, ex) for code, cls in CATALOGUE.items() for i, ex in enumerate(cls.INVALID)]
PLACEHOLDER = re.compile(r"\{[A-Za-z_]\w*\}")


def _the_finding(code: str, ex: Invalid) -> Finding:
    findings = lint_text("example.py", ex.source, [CATALOGUE[code]], torch_version=ex.torch_version).findings
    assert [f.code for f in findings] == [code], [f"{f.line}: {f.message}" for f in findings]
    return findings[0]


def _applied_once(source: str, fix: Fix) -> str:
    text = apply_edits(source, fix.edits)
    cst.parse_module(text)
    return text


@pytest.mark.parametrize("code,i,src", VALID, ids=[f"{c}-valid-{i}" for c, i, _ in VALID])
def test_valid_is_silent(code, i, src):
    findings = lint_text("example.py", src, [CATALOGUE[code]]).findings
    assert findings == [], [f"{f.line}:{f.column} {f.code} {f.message}" for f in findings]


@pytest.mark.parametrize("code,i,ex", INVALID, ids=[f"{c}-invalid-{i}" for c, i, _ in INVALID])
def test_invalid_is_reported(code, i, ex):
    f = _the_finding(code, ex)
    for text in (f.message, *(fx.message for fx in (f.fix, *f.alternatives) if fx)):
        assert not PLACEHOLDER.search(text), f"unformatted placeholder in {text!r}"
    if ex.line is not None:
        assert f.line == ex.line
    if ex.column is not None:
        assert f.column == ex.column
    if ex.message is not None:
        assert f.message == ex.message
    assert [_applied_once(ex.source, a) for a in f.alternatives] == list(ex.alternatives), "alternatives not pinned"
    if f.fix is None:
        assert ex.fixed is None, "pins a fixed text, but the finding has no fix"
        return
    assert ex.fixed is not None, f"the finding's fix ({f.fix.applicability.value}) is not pinned: add fixed=..."
    assert _applied_once(ex.source, f.fix) == ex.fixed


@pytest.mark.parametrize("code,i,ex", INVALID, ids=[f"{c}-invalid-{i}" for c, i, _ in INVALID])
def test_fix_applies_as_its_applicability_says(code, i, ex):
    """`--fix` applies the first safe fix of the finding (with `--unsafe-fixes`, the first unsafe one when
    none is safe): the text is that fix's pinned one (`fixed`, or its place in `alternatives`)."""
    f = _the_finding(code, ex)
    if not f.fixes():
        return
    rule = [CATALOGUE[code]]
    for flag in (False, True):
        result = fix_text("example.py", ex.source, rule, unsafe=flag, torch_version=ex.torch_version)
        applied = f.applied_fix(flag)
        expected = (
            ex.source
            if applied is None
            else ex.fixed
            if applied is f.fix
            else ex.alternatives[f.alternatives.index(applied)]
        )
        assert result.text == expected, f"--fix{' --unsafe-fixes' * flag} applied {applied and applied.message!r}"
    again = fix_text(
        "example.py", result.text, rule, unsafe=True, torch_version=ex.torch_version
    )  # after --unsafe-fixes
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


@pytest.mark.parametrize("code", list(CATALOGUE))
def test_fix_safety_names_every_applicability(code):
    """The "Fix safety" section says which of the rule's fixes are safe, unsafe or display-only."""
    cls = CATALOGUE[code]
    offered = set()
    for ex in cls.INVALID:
        f = _the_finding(code, ex)
        offered.update(fx.applicability for fx in (f.fix, *f.alternatives) if fx)
    assert bool(offered) == cls.fixable(), f"{code}: fix_safety must be empty exactly when no example offers a fix"
    for applicability in offered:
        assert re.search(rf"\b{applicability.value}\b", cls.fix_safety, re.IGNORECASE), (
            f"{code}: fix_safety does not say which fixes are {applicability.value}"
        )
