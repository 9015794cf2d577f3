"""TL114 empty-cache-in-loop beyond its embedded examples: look-alikes that must stay silent, bugs
that hide in classes, helpers and nested blocks, and where each finding lands."""

from __future__ import annotations

import textwrap

import pytest

CASES = [
    # (id, path, source, expected lines)
    (
        "empty-cache-once-per-epoch",
        "a.py",
        """
        import torch
        for epoch in range(3):
            for x, y in loader:
                optimizer.zero_grad()
                criterion(model(x), y).backward()
                optimizer.step()
            torch.cuda.empty_cache()
    """,
        [],
    ),
]


@pytest.mark.parametrize("case,path,src,lines", CASES, ids=[c[0] for c in CASES])
def test_case(case, path, src, lines, findings):
    got = findings(textwrap.dedent(src).lstrip("\n"), "TL114", path)
    assert [f.line for f in got] == lines, [f"{f.line}: {f.message}" for f in got]
