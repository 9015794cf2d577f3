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
        import torch
        model = torch.nn.Linear(4, 2)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        criterion = torch.nn.MSELoss()
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
        [6],
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


def test_tl111_backward_after_eval_in_the_same_iteration_gets_no_loop_start_fix(findings):
    """`model.train()` at the top of the loop would come too late for a backward later in the same pass."""
    src = (
        "import torch\nfrom torch import nn\nmodel = nn.Linear(2, 2)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "for epoch in range(3):\n    model.train()\n    for x, y in loader:\n        opt.zero_grad()\n"
        "        model(x).sum().backward()\n        opt.step()\n    model.eval()\n"
        "    model(x).sum().backward()\n    opt.step()\n"
    )
    (f,) = findings(src, "TL111")
    assert f.line == 11 and f.fix is None
