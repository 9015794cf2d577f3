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
    (
        "a-new-model-each-iteration-is-a-run-not-a-step",
        "a.py",
        """
        import torch
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self, width):
                super().__init__()
                self.fc = nn.Linear(width, 1)
            def forward(self, x):
                return self.fc(x)
        for width in (64, 128, 256):
            model = Net(width).to("cuda")
            model.train()
            model(torch.randn(8, width, device="cuda")).sum().backward()
            del model
            torch.cuda.empty_cache()
    """,
        [],
    ),
    (
        "a-model-made-from-the-one-the-loop-trains-is-not-new",
        "a.py",
        """
        import torch
        import torch.nn as nn
        model = nn.Linear(4, 1)
        for x, y in loader:
            net = torch.compile(model)
            net(x).sum().backward()
            optimizer.step()
            torch.cuda.empty_cache()
    """,
        [8],
    ),
    (
        "a-model-built-only-on-some-iterations-leaves-the-others-steps",
        "a.py",
        """
        import torch
        import torch.nn as nn
        model = nn.Linear(4, 1)
        for step, (x, y) in enumerate(loader):
            if step == 0:
                model = nn.Linear(4, 1)
            model(x).sum().backward()
            optimizer.step()
            torch.cuda.empty_cache()
    """,
        [9],
    ),
    (
        "a-new-module-the-loop-does-not-run-is-no-run",
        "a.py",
        """
        import torch
        import torch.nn as nn
        for x, y in loader:
            head = nn.Linear(4, 1)
            model(x).sum().backward()
            optimizer.step()
            torch.cuda.empty_cache()
    """,
        [7],
    ),
]


@pytest.mark.parametrize("case,path,src,lines", CASES, ids=[c[0] for c in CASES])
def test_case(case, path, src, lines, findings):
    got = findings(textwrap.dedent(src).lstrip("\n"), "TL114", path)
    assert [f.line for f in got] == lines, [f"{f.line}: {f.message}" for f in got]
