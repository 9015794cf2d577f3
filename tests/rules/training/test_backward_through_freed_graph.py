"""TL107 backward-through-freed-graph beyond its embedded examples: look-alikes that must stay silent, bugs
that hide in classes, helpers and nested blocks, and where each finding lands."""

from __future__ import annotations

import textwrap

import pytest

CASES = [
    # (id, path, source, expected lines)
    (
        "recurrent-state-recomputed-each-iteration",
        "a.py",
        """
        def run(model, seq, h):
            for x in seq:
                out, h = model(x, h)
                criterion(out).backward()
    """,
        [],
    ),
    (
        "same-loss-twice",
        "a.py",
        """
        import torch
        def step(model: torch.nn.Module, x):
            loss = model(x).sum()
            loss.backward()
            loss.backward()
    """,
        [4],
    ),
    (
        "backward-in-a-loop-over-listed-losses",
        "a.py",
        """
        import torch
        crit = torch.nn.MSELoss()
        def step(model: torch.nn.Module, x, y, z):
            out = model(x)
            loss_a = crit(out, y)
            loss_b = crit(out, z)
            for loss in (loss_a, loss_b):
                loss.backward()
    """,
        [8],
    ),
    (
        "loop-over-losses-from-separate-forwards",
        "a.py",
        """
        def step(model, x, y, z):
            for loss in (crit(model(x), y), crit(model(x), z)):
                loss.backward()
    """,
        [],
    ),
    (
        "zeros-requires-grad-twice",
        "a.py",
        """
        import torch
        def fit(x, y):
            w = torch.zeros(4, 1, requires_grad=True)
            out = x @ w
            loss = (out - y).abs().mean()
            loss.backward()
            loss.backward()
    """,
        [6],
    ),
    (
        "requires-grad-attribute-set",
        "a.py",
        """
        import torch
        def fit(x, targets):
            x.requires_grad = True
            h = x.exp()
            for t in targets:
                (h * t).sum().backward()
    """,
        [6],
    ),
    (
        "requires-grad-false-is-no-leaf",
        "a.py",
        """
        import torch
        def fit(x, targets):
            w = torch.zeros(4, requires_grad=False)
            h = x * w
            for t in targets:
                (h * t).sum().backward()
    """,
        [],
    ),
    (
        "leaf-aliased-before-the-loop",
        "a.py",
        """
        import torch
        def fit(xs):
            w = torch.randn(4, requires_grad=True)
            v = w
            for x in xs:
                (x * v).sum().backward()
    """,
        [],
    ),
    # a later loop (a notebook's next cell) re-uses the last step's output without making its own: it fails on
    # its own second iteration (reported there), so `retain_graph=True` in the first loop fixes nothing
    (
        "a-later-loop-reuses-the-last-steps-output",
        "a.py",
        """
        from torch import nn
        net = nn.Linear(2, 1)
        for x in batches:
            scores = net(x)
            scores.exp().mean().backward()
        for x in batches:
            scores.exp().sum().backward()
    """,
        [7],
    ),
    # the same later backward outside any loop: the first loop's last backward freed what it needs
    (
        "a-later-backward-reuses-the-last-steps-output",
        "a.py",
        """
        from torch import nn
        net = nn.Linear(2, 1)
        for x in batches:
            scores = net(x)
            scores.exp().mean().backward()
        scores.exp().sum().backward()
    """,
        [5],
    ),
]


@pytest.mark.parametrize("case,path,src,lines", CASES, ids=[c[0] for c in CASES])
def test_case(case, path, src, lines, findings):
    got = findings(textwrap.dedent(src).lstrip("\n"), "TL107", path)
    assert [f.line for f in got] == lines, [f"{f.line}: {f.message}" for f in got]


_TWO_LOSSES = """\
import torch
model = torch.nn.Linear(2, 2)
features = model(x)
a = features.sum()
b = features.mean()
a.backward({args})
b.backward()
"""


@pytest.mark.parametrize(
    "args,fixed_args",
    [
        # issue 27: `retain_graph=True` was added beside the removed keyword, which still raised TypeError
        ("retain_variables=True", "retain_graph=True"),
        ("retain_variables=False", "retain_graph=True"),
        ("gradient=None", "gradient=None, retain_graph=True"),
        ("", "retain_graph=True"),
    ],
)
def test_tl107_fix_passes_retain_graph_once(args, fixed_args, fixed):
    assert fixed(_TWO_LOSSES.format(args=args), "TL107") == _TWO_LOSSES.format(args=fixed_args)


@pytest.mark.parametrize("args", ["g, False", "**backward_kwargs", "*extra"])
def test_tl107_no_fix_when_retain_graph_may_be_passed_unseen(args, findings):
    (f,) = findings(_TWO_LOSSES.format(args=args), "TL107")
    assert f.fix is None


@pytest.mark.parametrize(
    "graph,reported",
    [
        ("x.sum()", False),  # SumBackward keeps no tensor: a second backward works (torch 2.13)
        ("x.view(-1).mean()", False),
        ("(x - x.t()).sum()", False),
        ("(x * 2).sum()", True),  # MulBackward keeps the factor: the second backward raises
        ("x.pow(2).sum()", True),
        ("torch.tanh(x).sum()", True),
    ],
)
def test_tl107_a_graph_that_keeps_no_tensor_can_be_traversed_twice(graph, reported, findings):
    src = f"import torch\nx = torch.randn(3, 3, requires_grad=True)\nloss = {graph}\nloss.backward()\nloss.backward()\n"
    assert [f.line for f in findings(src, "TL107")] == ([4] if reported else [])
