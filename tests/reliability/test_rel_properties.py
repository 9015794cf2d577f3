"""Property tests: no generated or mutated program makes the analyzer raise, and
fixing generated programs always re-parses and is idempotent.

Example counts are deliberate: together these run in well under a minute on
two cores (hypothesmith's grammar-driven generation is the slow part).
"""

from __future__ import annotations

import hypothesmith
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from invariants import check_fix, check_lint, check_lint_bytes
from programs import mutated_fixtures, torch_programs


def budget(n: int) -> settings:
    """n examples, no per-example deadline (the 20k-line cases are legitimately slow)."""
    return settings(max_examples=n, deadline=None, suppress_health_check=list(HealthCheck))


@budget(60)
@given(hypothesmith.from_node())
def test_grammar_generated_programs_lint_and_fix_safely(source):
    check_fix(source)


@budget(40)
@given(hypothesmith.from_grammar())
def test_grammar_generated_text_never_crashes(source):
    check_lint(source)


@budget(300)
@given(torch_programs())
def test_torch_programs_fix_safely(source):
    check_fix(source)


@budget(300)
@given(mutated_fixtures())
def test_mutated_fixtures_never_crash(source):
    check_lint(source)


@budget(300)
@given(st.binary(max_size=400) | mutated_fixtures().map(lambda s: s.encode("utf-8")))
def test_arbitrary_bytes_never_crash(data):
    check_lint_bytes(data)
