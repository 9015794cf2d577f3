"""fixtures/training: every TL1xx rule has a buggy program, and its fixes hold up per rule.

(tests/test_fixtures.py checks every fixture's `# expect:` lines under all rules
and --fix on the whole tree; here we check coverage and each rule's fix alone.)
"""

from __future__ import annotations

import libcst as cst
import pytest

from fixture_expectations import FIXTURES, expected
from torchlint.engine import fix_text, lint_text
from torchlint.registry import rules

FILES = sorted((FIXTURES / "training").glob("*.py"))
CODES = [c for c in rules() if c.startswith("TL1")]
BUGGY = [(p, code) for p in FILES for code in sorted({c for _, c in expected(p)}) if code in CODES]


def test_every_training_rule_has_a_buggy_fixture():
    covered = {code for _, code in BUGGY}
    assert covered == set(CODES), f"no buggy fixture for {sorted(set(CODES) - covered)}"


def test_there_are_clean_look_alikes():
    clean = [p for p in FILES if p.name.startswith("clean_")]
    assert len(clean) >= 15
    for p in clean:
        assert not lint_text(str(p), p.read_text(encoding="utf-8"), list(rules().values())).findings, p.name


@pytest.mark.parametrize("path,code", BUGGY, ids=[f"{p.stem}-{c}" for p, c in BUGGY])
def test_fix_of_one_rule_reparses_and_is_idempotent(path, code):
    rule = rules()[code]
    text = path.read_text(encoding="utf-8")
    before = lint_text(str(path), text, [rule]).findings
    assert sorted(f.line for f in before) == sorted(n for n, c in expected(path) if c == code)
    fixable = [f for f in before if f.fix is not None and f.fix.applies(unsafe=True)]
    result = fix_text(str(path), text, [rule], unsafe=True)
    cst.parse_module(result.text)
    assert result.applied == len(fixable)
    assert len(result.remaining) == len(before) - len(fixable), [f.message for f in result.remaining]
    again = fix_text(str(path), result.text, [rule], unsafe=True)
    assert again.applied == 0 and again.text == result.text
