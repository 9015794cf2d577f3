"""TL106 python-sum-over-tensors beyond its embedded examples: look-alikes that must stay silent, bugs
that hide in classes, helpers and nested blocks, and where each finding lands."""

from __future__ import annotations

import textwrap

import pytest

CASES = [
    # (id, path, source, expected lines)
    (
        "sum-over-dict-values-of-unknown-kind",
        "a.py",
        """
        losses = sum(loss for loss in loss_dict.values())
    """,
        [],
    ),
]


@pytest.mark.parametrize("case,path,src,lines", CASES, ids=[c[0] for c in CASES])
def test_case(case, path, src, lines, findings):
    got = findings(textwrap.dedent(src).lstrip("\n"), "TL106", path)
    assert [f.line for f in got] == lines, [f"{f.line}: {f.message}" for f in got]


def test_tl106_fix_keeps_per_sample_values():
    # issue 27: `torch.stack(losses).sum()` summed per-sample losses into one number, where `sum` kept them
    import torch

    from torchlint.engine import fix_text
    from torchlint.registry import rules

    src = (
        "import torch\ncriterion = torch.nn.MSELoss(reduction='none')\nlosses = []\n"
        "for x, y in batches:\n    losses.append(criterion(x, y))\ntotal = sum(losses)\n"
    )
    out = fix_text("m.py", src, [rules()["TL106"]], unsafe=True).text
    assert out.endswith("total = torch.stack(losses).sum(0)\n")
    torch.manual_seed(0)
    batches = [(torch.randn(4), torch.randn(4)) for _ in range(3)]
    before, after = {"batches": batches}, {"batches": batches}
    exec(src, before)
    exec(out, after)
    assert before["total"].shape == after["total"].shape == (4,)
    assert torch.allclose(before["total"], after["total"])
