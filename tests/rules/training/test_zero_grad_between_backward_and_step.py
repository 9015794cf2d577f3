"""TL102 zero-grad-between-backward-and-step beyond its embedded examples: look-alikes that must stay silent, bugs
that hide in classes, helpers and nested blocks, and where each finding lands."""

from __future__ import annotations

import textwrap

import pytest

CASES = [
    # (id, path, source, expected lines)
    (
        "zero-grad-inside-with-before-step",
        "a.py",
        """
        import torch
        for x, y in loader:
            with torch.autocast("cuda"):
                loss = criterion(model(x), y)
            scaler.scale(loss).backward()
            with timer("step"):
                optimizer.zero_grad()
                scaler.step(optimizer)
            scaler.update()
    """,
        [7],
    ),
]


@pytest.mark.parametrize("case,path,src,lines", CASES, ids=[c[0] for c in CASES])
def test_case(case, path, src, lines, findings):
    got = findings(textwrap.dedent(src).lstrip("\n"), "TL102", path)
    assert [f.line for f in got] == lines, [f"{f.line}: {f.message}" for f in got]
