"""TL701 deprecated-or-removed-api beyond its embedded examples."""

from __future__ import annotations

import libcst as cst
import pytest


@pytest.mark.parametrize(
    "call,replacement",
    [
        ("torch.qr(a, some=False)", 'torch.linalg.qr(a, mode="complete")'),
        ("torch.qr(a, True)", "torch.linalg.qr(a)"),
        ("torch.cholesky(a)", "torch.linalg.cholesky(a)"),
        ("torch.lu_solve(b, LU, piv)", "torch.linalg.lu_solve(LU, piv, b)"),
        ("torch.ger(u, v)", "torch.outer(u, v)"),
        ("torch.range(5)", "torch.arange(0, 6, dtype=torch.get_default_dtype())"),
        ("torch.range(10, 0, -2)", "torch.arange(10, -1, -2, dtype=torch.get_default_dtype())"),
        ("torch.range(0, 3, dtype=torch.int64)", "torch.arange(0, 4, dtype=torch.int64)"),
        ("torch.norm(x, p=1, dim=0, keepdim=True)", "torch.linalg.vector_norm(x, ord=1, dim=0, keepdim=True)"),
        ("torch.nn.UpsamplingNearest2d(scale_factor=2)", 'torch.nn.Upsample(scale_factor=2, mode="nearest")'),
        ("torch.nn.functional.upsample(x, size=4)", "torch.nn.functional.interpolate(x, size=4)"),
        ("torch.utils.data._utils.collate.default_collate(b)", "torch.utils.data.default_collate(b)"),
    ],
)
def test_tl701_mechanical_rewrites(call, replacement, fixed):
    out = fixed(f"import torch\ny = {call}\n", "TL701")
    assert out == f"import torch\ny = {replacement}\n"
    cst.parse_module(out)


@pytest.mark.parametrize(
    "call",
    [
        "torch.range(0, n)",
        "torch.norm(x, 'fro')",
        "torch.norm(x, dim=1, out=o)",
        "torch.qr(a, some=flag)",
        "torch.svd(a)",
    ],
)
def test_tl701_reports_but_does_not_guess(call, findings):
    (f,) = findings(f"import torch\ny = {call}\n", "TL701")
    assert f.fix is None


def test_tl701_no_fix_without_a_torch_import_to_spell_the_replacement(findings):
    (f,) = findings("from torch import qr\nq, r = qr(a)\n", "TL701")
    assert f.fix is None
