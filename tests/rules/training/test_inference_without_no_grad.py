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
        def test(model, loader):
            model.eval()
            correct = 0
            for x, y in loader:
                correct += (model(x).argmax(1) == y).sum().item()
            return correct
    """,
        [4],
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
        model.eval()
        for split in splits:
            for x in split:
                model(x)
    """,
        [2],
    ),
]


@pytest.mark.parametrize("case,path,src,lines", CASES, ids=[c[0] for c in CASES])
def test_case(case, path, src, lines, findings):
    got = findings(textwrap.dedent(src).lstrip("\n"), "TL110", path)
    assert [f.line for f in got] == lines, [f"{f.line}: {f.message}" for f in got]
