"""TL104 scheduler-step-before-optimizer-step beyond its embedded examples: look-alikes that must stay silent, bugs
that hide in classes, helpers and nested blocks, and where each finding lands."""

from __future__ import annotations

import textwrap

import pytest

CASES = [
    # (id, path, source, expected lines)
    (
        "scheduler-per-batch-at-start",
        "a.py",
        """
        for x, y in loader:
            lr_scheduler.step()
            optimizer.zero_grad()
            criterion(model(x), y).backward()
            optimizer.step()
    """,
        [2],
    ),
    (
        "timm-style-scheduler-with-epoch-argument",
        "a.py",
        """
        for epoch in range(epochs):
            lr_scheduler.step(epoch)
            train_one_epoch(model, loader, optimizer)
    """,
        [],
    ),
]


@pytest.mark.parametrize("case,path,src,lines", CASES, ids=[c[0] for c in CASES])
def test_case(case, path, src, lines, findings):
    got = findings(textwrap.dedent(src).lstrip("\n"), "TL104", path)
    assert [f.line for f in got] == lines, [f"{f.line}: {f.message}" for f in got]
