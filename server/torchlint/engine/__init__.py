"""The engine: parse once, traverse once, run every enabled rule, apply fixes.

The names below load on first use: `torchlint.engine.target_version` (which the
configuration imports) must not pull libcst into a run that only reads the cache
or prints the version.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torchlint.engine.fixes import FixResult, fix_text
    from torchlint.engine.rule import Invalid, Rule
    from torchlint.engine.runner import PARSE_ERROR_CODE, LintResult, lint_bytes, lint_text

_HOMES = {
    "FixResult": "fixes",
    "fix_text": "fixes",
    "Invalid": "rule",
    "Rule": "rule",
    "PARSE_ERROR_CODE": "runner",
    "LintResult": "runner",
    "lint_bytes": "runner",
    "lint_text": "runner",
}

__all__ = ["FixResult", "Invalid", "LintResult", "PARSE_ERROR_CODE", "Rule", "fix_text", "lint_bytes", "lint_text"]


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
