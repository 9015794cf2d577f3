"""The text prefilter (Rule.requires) never loses a finding.

Every rule's examples, every fixture and a slice of torch's own sources are
linted with and without the prefilter; the findings must be identical.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from fixture_expectations import FIXTURES
from torchlint.engine import lint_text
from torchlint.engine.runner import applicable
from torchlint.registry import rules

CATALOGUE = rules()
ALL = list(CATALOGUE.values())


def _torch_sources(limit: int = 60) -> list[Path]:
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return []
    root = Path(list(spec.submodule_search_locations)[0])
    return sorted((root / "nn").rglob("*.py"))[:limit] + sorted((root / "optim").glob("*.py"))


def _texts():
    for code, cls in CATALOGUE.items():
        for i, ex in enumerate(cls.INVALID):
            yield f"{code}-invalid-{i}", ex.source
        for i, src in enumerate(cls.VALID):
            yield f"{code}-valid-{i}", src
        yield f"{code}-docs", cls.example
    for p in sorted(FIXTURES.rglob("*.py")):
        yield str(p.relative_to(FIXTURES)), p.read_text(encoding="utf-8")
    for p in _torch_sources():
        yield f"torch/{p.name}", p.read_text(encoding="utf-8")


CASES = list(_texts())


def _key(findings):
    return sorted((f.line, f.column, f.code, f.message) for f in findings)


@pytest.mark.parametrize("name,text", CASES, ids=[c[0] for c in CASES])
def test_prefilter_loses_nothing(name, text):
    fast = lint_text("x.py", text, ALL)
    full = lint_text("x.py", text, ALL, prefilter=False)
    assert _key(fast.findings) == _key(full.findings)


def test_invalid_examples_mention_what_their_rule_requires():
    for code, cls in CATALOGUE.items():
        for ex in cls.INVALID:
            assert applicable([cls], ex.source), f"{code}: an INVALID example lacks all of {cls.requires}"


def test_file_no_rule_applies_to_still_gets_syntax_errors():
    gated = [c for c in ALL if c.requires]
    if not gated:
        pytest.skip("no rule declares `requires` yet")
    text = "def f(:\n    pass\n"
    assert [f.code for f in lint_text("x.py", text, gated).findings] == ["TL000"]
    assert lint_text("x.py", "x = 1\n", gated).findings == []
