"""One rule alone on a snippet: the tests under tests/rules check each rule beyond its embedded examples."""

from __future__ import annotations

import pytest

from torchlint.engine import fix_text, lint_text
from torchlint.registry import rules


@pytest.fixture
def findings():
    """`findings(src, code, path="m.py")`: what rule `code` alone reports on `src`."""

    def run(src: str, code: str, path: str = "m.py"):
        return lint_text(path, src, [rules()[code]]).findings

    return run


@pytest.fixture
def fixed():
    """`fixed(src, code)`: the text after `--fix --unsafe-fixes` with rule `code` alone (the rule's
    fix itself, whatever its applicability; tests/test_rule_examples.py checks the applicability)."""

    def run(src: str, code: str) -> str:
        return fix_text("m.py", src, [rules()[code]], unsafe=True).text

    return run
