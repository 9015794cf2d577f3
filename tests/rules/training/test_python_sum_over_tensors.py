"""TL106 python-sum-over-tensors beyond its embedded examples: look-alikes that must stay silent, bugs
that hide in classes, helpers and nested blocks, and where each finding lands."""

from __future__ import annotations

import textwrap

import pytest

CASES = [
    # (id, path, source, expected lines)
    (
        "sum-over-dict-values-of-unknown-kind",
        "a.py",
        """
        losses = sum(loss for loss in loss_dict.values())
    """,
        [],
    ),
]


@pytest.mark.parametrize("case,path,src,lines", CASES, ids=[c[0] for c in CASES])
def test_case(case, path, src, lines, findings):
    got = findings(textwrap.dedent(src).lstrip("\n"), "TL106", path)
    assert [f.line for f in got] == lines, [f"{f.line}: {f.message}" for f in got]
