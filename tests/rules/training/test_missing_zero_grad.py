"""TL101 missing-zero-grad beyond its embedded examples: look-alikes that must stay silent, bugs
that hide in classes, helpers and nested blocks, and where each finding lands."""

from __future__ import annotations

import textwrap

import pytest

CASES = [
    # (id, path, source, expected lines)
    (
        "rl-env-step-is-not-an-optimizer",
        "a.py",
        """
        for episode in range(10):
            obs, reward, done, info = env.step(policy(obs))
            loss = -reward * log_prob
            loss.backward()
    """,
        [],
    ),
    (
        "deepspeed-engine-clears-itself",
        "a.py",
        """
        for batch in loader:
            loss = model_engine(batch)
            model_engine.backward(loss)
            model_engine.step()
    """,
        [],
    ),
    (
        "one-optimizer-cleared-through-the-model",
        "a.py",
        """
        for real in loader:
            netD.zero_grad()
            errD(real).backward()
            optimizerD.step()
            netG.zero_grad()
            errG().backward()
            optimizerG.step()
    """,
        [],
    ),
    (
        "zero-grad-before-the-loop-only",
        "a.py",
        """
        optimizer.zero_grad()
        for x, y in loader:
            criterion(model(x), y).backward()
            optimizer.step()
    """,
        [2],
    ),
    (
        "while-loop-over-steps",
        "a.py",
        """
        import torch
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
        step = 0
        while step < 1000:
            x, y = next(batches)
            criterion(model(x), y).backward()
            optimizer.step()
            step += 1
    """,
        [4],
    ),
]


@pytest.mark.parametrize("case,path,src,lines", CASES, ids=[c[0] for c in CASES])
def test_case(case, path, src, lines, findings):
    got = findings(textwrap.dedent(src).lstrip("\n"), "TL101", path)
    assert [f.line for f in got] == lines, [f"{f.line}: {f.message}" for f in got]
