"""TL109 grad-of-non-leaf beyond its embedded examples: look-alikes that must stay silent, bugs
that hide in classes, helpers and nested blocks, and where each finding lands."""

from __future__ import annotations

import textwrap

import pytest

CASES = [
    # (id, path, source, expected lines)
    (
        "power-of-a-leaf",
        "a.py",
        """
        import torch
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = x ** 2
        y.sum().backward()
        print(y.grad)
    """,
        [5],
    ),
    (
        "grad-read-after-retain-grad-in-a-helper-scope",
        "a.py",
        """
        def f(model, x):
            h = model(x)
            h.retain_grad()
            h.sum().backward()
            return h.grad
    """,
        [],
    ),
    (
        "grad-of-unknown-tensor",
        "a.py",
        """
        def f(x):
            x.sum().backward()
            return x.grad
    """,
        [],
    ),
]


@pytest.mark.parametrize("case,path,src,lines", CASES, ids=[c[0] for c in CASES])
def test_case(case, path, src, lines, findings):
    got = findings(textwrap.dedent(src).lstrip("\n"), "TL109", path)
    assert [f.line for f in got] == lines, [f"{f.line}: {f.message}" for f in got]
