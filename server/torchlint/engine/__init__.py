"""The engine: parse once, traverse once, run every enabled rule, apply fixes.

The names below load on first use: `torchlint.engine.semantic.target_version` (which the
configuration imports) must not pull libcst into a run that only reads the cache
or prints the version.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torchlint.engine.fixes import FixResult, fix_text
    from torchlint.engine.rule import Invalid, Rule
    from torchlint.engine.runner import PARSE_ERROR_CODE, LintResult, lint_bytes, lint_text

__all__ = ["FixResult", "Invalid", "LintResult", "PARSE_ERROR_CODE", "Rule", "fix_text", "lint_bytes", "lint_text"]


def __getattr__(name: str) -> object:
    if name in ("FixResult", "fix_text"):
        from torchlint.engine import fixes

        return getattr(fixes, name)
    if name in ("Invalid", "Rule"):
        from torchlint.engine import rule

        return getattr(rule, name)
    if name in ("PARSE_ERROR_CODE", "LintResult", "lint_bytes", "lint_text"):
        from torchlint.engine import runner

        return getattr(runner, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
