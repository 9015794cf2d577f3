"""TL103 step-before-backward beyond its embedded examples: look-alikes that must stay silent, bugs
that hide in classes, helpers and nested blocks, and where each finding lands."""

from __future__ import annotations

import textwrap

import pytest

CASES = [
    # (id, path, source, expected lines)
    (
        "step-in-other-branch-than-backward",
        "a.py",
        """
        for i, (x, y) in enumerate(loader):
            if i % 2:
                optimizer.step()
            else:
                criterion(model(x), y).backward()
    """,
        [],
    ),
]


@pytest.mark.parametrize("case,path,src,lines", CASES, ids=[c[0] for c in CASES])
def test_case(case, path, src, lines, findings):
    got = findings(textwrap.dedent(src).lstrip("\n"), "TL103", path)
    assert [f.line for f in got] == lines, [f"{f.line}: {f.message}" for f in got]
