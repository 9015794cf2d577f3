"""The promises every input must keep, checked the same way by every reliability test.

`check_lint` : lint never raises; the result is rule findings, or exactly one TL000
               (parse/decode error), never an "internal error in rule".
`check_input`: both, on raw bytes (the fuzz target and its replayed crashes).
`check_fix`  : every offered fix, alone, re-parses and leaves the lines outside its
               edits byte-identical; fixing everything re-parses and a second
               fix pass changes nothing.
"""

from __future__ import annotations

import re

import libcst as cst

from torchlint.engine import PARSE_ERROR_CODE, fix_text, lint_bytes, lint_text
from torchlint.engine.core.source import apply_edits, decode, split_lines
from torchlint.registry import rules

ALL_RULES = list(rules().values())
FIXABLE = [r for r in ALL_RULES if r.fixable()]


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


# Fuzzed programs target torch 2.1, where a bare torch.load (TL601) is a finding with a fix to exercise.
TARGET = "2.1"


def lines(text: str) -> list[str]:
    """Lines with their endings, split only where Python splits (not at form feeds)."""
    return _LINE.findall(text)


def _describe(findings) -> list[str]:
    return [f"{f.line}:{f.column} {f.code} {f.message}" for f in findings]


def check_findings(text: str | None, findings, errors=()) -> None:
    assert not errors, f"a rule raised: {errors}"
    tl000 = [f for f in findings if f.code == PARSE_ERROR_CODE]
    assert not any("internal error" in f.message for f in tl000), _describe(tl000)
    if tl000:
        assert len(findings) == 1, f"TL000 must be the only finding: {_describe(findings)}"
    if text is None:
        return
    n_lines = len(split_lines(text))
    for f in findings:
        assert 1 <= f.line <= f.end_line <= n_lines + 1, _describe([f])
        assert f.column >= 1 and f.end_column >= 1, _describe([f])


def check_lint(text: str, rule_set=None) -> list:
    result = lint_text("fuzzed.py", text, ALL_RULES if rule_set is None else rule_set, torch_version=TARGET)
    check_findings(text, result.findings, result.errors)
    return result.findings


def check_lint_bytes(data: bytes, rule_set=None) -> list:
    result, source = lint_bytes("fuzzed.py", data, ALL_RULES if rule_set is None else rule_set)
    check_findings(source.text if source else None, result.findings, result.errors)
    return result.findings


def parses(text: str) -> bool:
    try:
        cst.parse_module(text)
        return True
    except Exception:
        return False


def check_single_fixes(text: str, findings, limit: int = 40) -> int:
    """Each offered fix on its own (the first `limit`): parses, and touches only the lines it names."""
    old = lines(text)
    checked = 0
    for f in findings[:limit]:
        for fx in (f.fix, *f.alternatives):
            if fx is None:
                continue
            new_text = apply_edits(text, list(fx.edits))
            assert parses(new_text), f"{f.code} fix {fx.message!r} does not parse:\n{new_text}"
            first = min(e.line for e in fx.edits)
            last = max(e.end_line for e in fx.edits)
            new = lines(new_text)
            assert new[: first - 1] == old[: first - 1], f"{f.code}: lines before {first} changed"
            tail = len(old) - last
            if tail > 0:
                assert new[len(new) - tail :] == old[len(old) - tail :], f"{f.code}: lines after {last} changed"
            checked += 1
    return checked


def check_fix(text: str, rule_set=None) -> tuple[str, int]:
    """Apply all fixes; returns (fixed text, fixes applied) after checking the promises."""
    rule_set = ALL_RULES if rule_set is None else rule_set
    findings = check_lint(text, rule_set)
    if any(f.code == PARSE_ERROR_CODE for f in findings):
        return text, 0
    check_single_fixes(text, findings)
    result = fix_text("fuzzed.py", text, rule_set, unsafe=True, torch_version=TARGET)  # every fix --fix can apply
    assert parses(result.text), f"fixed text does not parse:\n{result.text}"
    check_findings(result.text, result.remaining)
    again = fix_text("fuzzed.py", result.text, rule_set, unsafe=True, torch_version=TARGET)
    assert again.applied == 0 and again.text == result.text, "a second --fix changed the file again"
    return result.text, result.applied


def check_input(data: bytes) -> None:
    """Everything above for one input, as the fuzz target and its replayed crashes check it."""
    findings = check_lint_bytes(data)
    if not any(f.fix for f in findings) or any(f.code == PARSE_ERROR_CODE for f in findings):
        return  # fixing would change nothing: skip the slow part, keep the fuzzer fast
    check_fix(decode(data).text)
