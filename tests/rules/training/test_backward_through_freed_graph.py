"""TL107 backward-through-freed-graph beyond its embedded examples: look-alikes that must stay silent, bugs
that hide in classes, helpers and nested blocks, and where each finding lands."""

from __future__ import annotations

import textwrap

import pytest

CASES = [
    # (id, path, source, expected lines)
    (
        "recurrent-state-recomputed-each-iteration",
        "a.py",
        """
        def run(model, seq, h):
            for x in seq:
                out, h = model(x, h)
                criterion(out).backward()
    """,
        [],
    ),
    (
        "same-loss-twice",
        "a.py",
        """
        def step(model, x):
            loss = model(x).sum()
            loss.backward()
            loss.backward()
    """,
        [3],
    ),
    (
        "backward-in-a-loop-over-listed-losses",
        "a.py",
        """
        def step(model, x, y, z):
            out = model(x)
            loss_a = crit(out, y)
            loss_b = crit(out, z)
            for loss in (loss_a, loss_b):
                loss.backward()
    """,
        [6],
    ),
    (
        "loop-over-losses-from-separate-forwards",
        "a.py",
        """
        def step(model, x, y, z):
            for loss in (crit(model(x), y), crit(model(x), z)):
                loss.backward()
    """,
        [],
    ),
]


@pytest.mark.parametrize("case,path,src,lines", CASES, ids=[c[0] for c in CASES])
def test_case(case, path, src, lines, findings):
    got = findings(textwrap.dedent(src).lstrip("\n"), "TL107", path)
    assert [f.line for f in got] == lines, [f"{f.line}: {f.message}" for f in got]
