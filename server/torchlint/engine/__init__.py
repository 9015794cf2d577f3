"""The engine: parse once, traverse once, run every enabled rule, apply fixes."""

from torchlint.engine.fixes import FixResult, fix_text
from torchlint.engine.rule import Invalid, Rule
from torchlint.engine.runner import PARSE_ERROR_CODE, LintResult, lint_bytes, lint_text

__all__ = ["FixResult", "Invalid", "LintResult", "PARSE_ERROR_CODE", "Rule", "fix_text", "lint_bytes", "lint_text"]
