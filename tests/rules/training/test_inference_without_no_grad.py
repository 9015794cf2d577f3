"""TL110 inference-without-no-grad beyond its embedded examples: look-alikes that must stay silent, bugs
that hide in classes, helpers and nested blocks, and where each finding lands."""

from __future__ import annotations

import textwrap

import pytest

CASES = [
    # (id, path, source, expected lines)
    (
        "pytest-function-in-a-test-file",
        "tests/test_model.py",
        """
        def test_forward_shapes():
            model.eval()
            for shape in [(1, 3), (2, 3)]:
                assert model(torch.zeros(shape)).shape[0] == shape[0]
    """,
        [],
    ),
    (
        "test-function-of-a-training-script",
        "train.py",
        """
        import torch
        def test(model: torch.nn.Module, loader):
            model.eval()
            correct = 0
            for x, y in loader:
                correct += (model(x).argmax(1) == y).sum().item()
            return correct
    """,
        [5],
    ),
    (
        "saliency-loop-needs-gradients",
        "a.py",
        """
        def predict_saliency(model, images):
            maps = []
            for image in images:
                image.requires_grad_()
                model(image).max().backward()
                maps.append(image.grad)
            return maps
    """,
        [],
    ),
    (
        "nested-eval-loops-report-the-outer",
        "a.py",
        """
        import torch
        model = torch.nn.Linear(4, 2)
        model.eval()
        for split in splits:
            for x in split:
                model(x)
    """,
        [4],
    ),
    (
        "helper-appends-its-output-to-a-buffer",
        "a.py",
        """
        import torch
        model = torch.nn.Linear(4, 2)
        saved = []
        def act(state):
            probs = model(state).softmax(-1)
            saved.append(probs.log().max())
            return 0
        for epoch in range(3):
            for x, y in loader:
                torch.nn.functional.mse_loss(model(x), y).backward()
                act(x)
    """,
        [],
    ),
    (
        "helper-returns-an-unpacked-output",
        "a.py",
        """
        import torch
        model = torch.nn.Linear(4, 2)
        def act(state):
            scores, value = model(state)
            return scores.argmax().item(), value
        for epoch in range(3):
            for x, y in loader:
                torch.nn.functional.mse_loss(model(x), y).backward()
                act(x)
    """,
        [],
    ),
    (
        "helper-called-once-outside-loops",
        "a.py",
        """
        import torch
        model = torch.nn.Linear(4, 2)
        def show(z):
            print(model(z).sum().item())
        for epoch in range(3):
            for x, y in loader:
                torch.nn.functional.mse_loss(model(x), y).backward()
        show(torch.randn(1, 4))
    """,
        [],
    ),
    (
        "method-helper-called-from-the-training-loop",
        "a.py",
        """
        import torch
        class Trainer:
            def __init__(self):
                self.model = torch.nn.Linear(4, 2)
            def log_sample(self, z):
                out = self.model(z)
                print(out.mean().item())
            def fit(self, loader):
                for x, y in loader:
                    torch.nn.functional.mse_loss(self.model(x), y).backward()
                    self.log_sample(x)
    """,
        [6],
    ),
    (
        "method-helper-stores-its-output-on-self",
        "a.py",
        """
        import torch
        class Trainer:
            def __init__(self):
                self.model = torch.nn.Linear(4, 2)
            def remember(self, z):
                self.last = self.model(z) * 2
            def fit(self, loader):
                for x, y in loader:
                    self.remember(x)
                    torch.nn.functional.mse_loss(self.model(x), y).backward()
    """,
        [],
    ),
]


@pytest.mark.parametrize("case,path,src,lines", CASES, ids=[c[0] for c in CASES])
def test_case(case, path, src, lines, findings):
    got = findings(textwrap.dedent(src).lstrip("\n"), "TL110", path)
    assert [f.line for f in got] == lines, [f"{f.line}: {f.message}" for f in got]


EVALUATES = """\
import torch
def {name}(net: torch.nn.Module, loader):
    net.eval()
    hits = 0
    for x, y in loader:
        hits += (net(x).argmax(1) == y).sum().item()
    return hits
"""
NO_EVAL_CONTEXT = """\
import torch
def {name}(net: torch.nn.Module, loader):
    hits = 0
    for x, y in loader:
        hits += (net(x).argmax(1) == y).sum().item()
    return hits
"""


@pytest.mark.parametrize("name", ["validate", "evaluate", "predict", "test_epoch", "infer", "step_b"])
def test_a_functions_name_decides_nothing(name, findings):
    """The eval-mode switch is the evidence (issue 26): every name gets the same verdict, with or without it."""
    assert [f.line for f in findings(EVALUATES.format(name=name), "TL110")] == [5]
    assert findings(NO_EVAL_CONTEXT.format(name=name), "TL110") == []


def test_tl110_helpers_are_judged_in_a_file_that_calls_backward_not_one_that_names_it(findings):
    src = (
        "import torch\nmodel = torch.nn.Linear(4, 1)\n"
        "def sample(z):\n    out = model(z)\n    print(out.mean().item())\n"
        "for epoch in range(10):\n    for x, y in loader:\n        {}\n    sample(torch.randn(2, 4))\n"
    )
    assert [f.line for f in findings(src.format("loss(model(x), y).backward()"), "TL110")] == [4]
    assert findings(src.format("log(model(x), y)  # no backward() here: a scoring pass"), "TL110") == []
