"""A linted file's tree is freed with its result: no analysis cache outlives the file.

The language server lints the same documents thousands of times; anything a
rule or analysis keeps in a module-level cache would grow without bound.
"""

from __future__ import annotations

import gc

import libcst as cst

from fixture_expectations import FIXTURES
from torchlint.engine import lint_text
from torchlint.registry import rules


def _live_nodes() -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, cst.CSTNode))


def test_trees_are_released_after_linting():
    catalogue = list(rules().values())
    texts = [p.read_text(encoding="utf-8") for p in sorted(FIXTURES.rglob("*.py"))]
    held = lint_text("x.py", texts[0], catalogue)
    assert held.module is not None, "the lint parsed the file"
    with_tree = _live_nodes()
    del held
    before = _live_nodes()
    assert with_tree - before > 100, "the count sees a held tree, and the tree goes with its result"
    parsed = findings = 0
    for text in texts:
        result = lint_text("x.py", text, catalogue)
        parsed += result.module is not None
        findings += len(result.findings)
        del result
    after = _live_nodes()
    assert parsed > len(texts) // 2 and findings > 0, "the lints parsed the fixtures and found their bugs"
    assert after - before < 100, f"{after - before} libcst nodes outlived their lint"
