"""TL111 train-mode-not-restored beyond its embedded examples: look-alikes that must stay silent, bugs
that hide in classes, helpers and nested blocks, and where each finding lands."""

from __future__ import annotations

import textwrap

import pytest

CASES = [
    # (id, path, source, expected lines)
    (
        "validation-helper-never-restores",
        "a.py",
        """
        def validate(model, loader):
            model.eval()
            return [model(x) for x in loader]

        for epoch in range(3):
            for x, y in train_loader:
                optimizer.zero_grad()
                criterion(model(x), y).backward()
                optimizer.step()
            validate(model, val_loader)
    """,
        [2],
    ),
    (
        "train-at-epoch-start-inside-helper",
        "a.py",
        """
        def train_epoch(model, loader):
            model.train()
            for x, y in loader:
                optimizer.zero_grad()
                criterion(model(x), y).backward()
                optimizer.step()

        for epoch in range(3):
            train_epoch(model, train_loader)
            model.eval()
    """,
        [],
    ),
]


@pytest.mark.parametrize("case,path,src,lines", CASES, ids=[c[0] for c in CASES])
def test_case(case, path, src, lines, findings):
    got = findings(textwrap.dedent(src).lstrip("\n"), "TL111", path)
    assert [f.line for f in got] == lines, [f"{f.line}: {f.message}" for f in got]
