"""Applying fixes: repeatedly lint, apply non-overlapping fixes, re-parse.

Of a finding's fixes the first applicable one is applied (Finding.applied_fix: the first
safe one; with `unsafe`, the first unsafe one when none is safe; a display fix never). A
fix whose result does not parse is dropped (the others still apply), so the text we hand
back always parses.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst

from torchlint.engine.core.source import apply_edits
from torchlint.engine.rule import Rule
from torchlint.engine.runner import PARSE_ERROR_CODE, lint_text, parse
from torchlint.findings import Finding, Fix

MAX_PASSES = 10


@dataclass
class FixResult:
    text: str
    applied: int
    remaining: list[Finding]


def _parses(text: str) -> bool:
    """Through the runner's parse, so fixed text gets the same guards (nesting) as any input."""
    return isinstance(parse("fix", text), cst.Module)


def _overlaps(a: Fix, b: Fix) -> bool:
    for x in a.edits:
        for y in b.edits:
            if (x.line, x.column) < (y.end_line, y.end_column) and (y.line, y.column) < (x.end_line, x.end_column):
                return True
            if (x.line, x.column) == (y.line, y.column):  # two inserts at one spot: order unclear
                return True
    return False


def fix_text(
    path: str, text: str, rules: Sequence[type[Rule]], *, unsafe: bool = False, torch_version: str | None = None
) -> FixResult:
    applied = 0
    rejected: set[Fix] = set()  # fixes whose result did not parse
    for _ in range(MAX_PASSES):
        findings = lint_text(path, text, rules, torch_version=torch_version).findings
        if any(f.code == PARSE_ERROR_CODE for f in findings):
            return FixResult(text, applied, findings)
        chosen: list[Fix] = []
        for f in findings:
            fix = f.applied_fix(unsafe)
            if fix is not None and fix not in rejected and not any(_overlaps(fix, c) for c in chosen):
                chosen.append(fix)
        if not chosen:
            return FixResult(text, applied, findings)
        candidate = apply_edits(text, [edit for fix in chosen for edit in fix.edits])
        if _parses(candidate):
            text, applied = candidate, applied + len(chosen)
            continue
        for fix in chosen:  # apply the first that parses on its own; drop the bad ones
            one = apply_edits(text, fix.edits)
            if _parses(one):
                text, applied = one, applied + 1
                break
            rejected.add(fix)
    return FixResult(text, applied, lint_text(path, text, rules, torch_version=torch_version).findings)
