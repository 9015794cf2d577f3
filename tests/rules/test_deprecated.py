"""Deprecated-API and numerics rules (TL701-TL706, TL801-TL802) beyond their embedded examples."""

from __future__ import annotations

import libcst as cst
import pytest

from torchlint.engine import fix_text, lint_text
from torchlint.registry import rules

R = rules()


def findings(src: str, code: str):
    return [f for f in lint_text("m.py", src, [R[code]]).findings if f.code == code]


@pytest.mark.parametrize(
    "call,fixed",
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
def test_tl701_mechanical_rewrites(call, fixed):
    out = fix_text("m.py", f"import torch\ny = {call}\n", [R["TL701"]])
    assert out.text == f"import torch\ny = {fixed}\n"
    cst.parse_module(out.text)


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
def test_tl701_reports_but_does_not_guess(call):
    (f,) = findings(f"import torch\ny = {call}\n", "TL701")
    assert f.fix is None


def test_tl701_no_fix_without_a_torch_import_to_spell_the_replacement():
    (f,) = findings("from torch import qr\nq, r = qr(a)\n", "TL701")
    assert f.fix is None


def test_tl702_volatile_gets_a_hint_and_no_fix():
    (f,) = findings("from torch.autograd import Variable\nx = Variable(t, volatile=True)\n", "TL702")
    assert "no_grad" in f.message and f.fix is None


def test_tl703_parameter_loop_outside_training_is_silent():
    src = "def count(model):\n    for p in model.parameters():\n        n = p.data.numel()\n"
    assert findings(src, "TL703") == []


def test_tl704_non_literal_pretrained_gets_a_hint():
    (f,) = findings("import torchvision\nm = torchvision.models.vgg16(pretrained=use_pt)\n", "TL704")
    assert f.fix is None and "if use_pt else None" in f.message


def test_tl705_appends_after_existing_keywords():
    out = fix_text(
        "m.py", "import torch\ny = torch.utils.checkpoint.checkpoint(f, x, preserve_rng_state=False)\n", [R["TL705"]]
    )
    assert out.text.endswith("checkpoint(f, x, preserve_rng_state=False, use_reentrant=False)\n")


def test_tl706_only_assignments():
    assert findings("if p.require_grad:\n    pass\n", "TL706") == []


def test_tl801_tl802_need_torch_functions():
    assert findings("import numpy as np\ny = np.log(1 + x)\n", "TL801") == []
    assert findings("import numpy as np\ny = np.exp(x) - 1\n", "TL802") == []
    assert len(findings("from torch import exp\ny = exp(x) - 1\n", "TL802")) == 1
