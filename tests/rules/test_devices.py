"""Device rules (TL301-TL305) beyond their embedded examples."""

from __future__ import annotations

import libcst as cst
import pytest

from torchlint.engine import fix_text, lint_text
from torchlint.registry import rules

R = rules()


def findings(src: str, code: str):
    return [f for f in lint_text("m.py", src, [R[code]]).findings if f.code == code]


def test_tl301_fix_reuses_cuda_call_of_the_model():
    src = "model = Net().cuda()\nfor x, y in loader:\n    loss = criterion(model(x), y)\n"
    out = fix_text("m.py", src, [R["TL301"]]).text
    assert (
        out
        == "model = Net().cuda()\nfor x, y in loader:\n    x = x.cuda()\n    y = y.cuda()\n    loss = criterion(model(x), y)\n"
    )


def test_tl301_follows_names_derived_from_the_batch():
    src = (
        "model.to(device)\nfor batch in loader:\n    inputs = batch['x'].float()\n    labels = batch['y']\n"
        "    labels = labels.to(device)\n    out = model(inputs)\n    loss = criterion(out, labels)\n"
    )
    (f,) = findings(src, "TL301")
    assert (f.line, "`inputs`" in f.message) == (6, True)


def test_tl301_helper_that_moves_in_place_clears_the_batch():
    src = "model.to(device)\nfor batch in loader:\n    move_to(batch, device)\n    out = model(**batch)\n"
    assert findings(src, "TL301") == []


def test_tl301_needs_the_called_model_to_be_moved():
    src = "encoder.to(device)\nfor x in loader:\n    out = head(x)\n"
    assert findings(src, "TL301") == []


def test_tl301_no_fix_when_device_expression_is_out_of_scope():
    src = (
        "def build(device):\n    global model\n    model = Net().to(device)\n"
        "def train():\n    for x, y in loader:\n        out = model(x)\n"
    )
    (f,) = findings(src, "TL301")
    assert f.fix is None


def test_tl301_fix_when_the_device_is_a_parameter_of_the_training_function():
    src = (
        "def main(device):\n    model.to(device)\n"
        "def train(model, loader, device):\n    for x in loader:\n        out = model(x)\n"
    )
    out = fix_text("m.py", src, [R["TL301"]]).text
    assert "    for x in loader:\n        x = x.to(device)\n        out = model(x)\n" in out


def test_tl302_whole_model_moved_elsewhere_is_fine():
    src = "model = Net()\nmodel.head.to(device)\nmodel = model.to(device)\nout = model(x)\n"
    assert findings(src, "TL302") == []


@pytest.mark.parametrize(
    "src",
    [
        "import torch\ndef f(x):\n    if x.is_cuda:\n        return x.cuda()\n",
        "import torch\nif args.gpu:\n    net.cuda()\n",
        "import torch\nimport pytest\n@pytest.mark.skipif(not torch.cuda.is_available(), reason='gpu')\ndef test_gpu():\n    torch.ones(2).cuda()\n",
        "import torch\nx = x.cuda(non_blocking=True) if use_cuda else x\n",
        "x = x.to(device)\n",
    ],
)
def test_tl303_guarded_or_variable_device_is_silent(src):
    assert findings(src, "TL303") == []


def test_tl303_reports_each_hard_coded_spelling():
    src = 'import torch\na = torch.zeros(2, device="cuda:1")\nb = a.to("cuda")\nc = b.cuda(0)\n'
    assert [f.line for f in findings(src, "TL303")] == [2, 3, 4]


FORWARD = "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def forward(self, x):\n{body}"


def test_tl304_later_relocation_or_index_use_is_fine():
    body = "        idx = torch.randperm(x.size(0))\n        pos = torch.arange(8)\n        pos = pos.to(x.device)\n        return x[idx] + pos\n"
    assert findings(FORWARD.format(body=body), "TL304") == []


def test_tl304_arithmetic_and_setitem_uses_are_followed():
    body = (
        "        n = torch.ones(x.shape[0]) * 4 + 1\n        drop = torch.randint(1, 5, (x.shape[0],))\n"
        "        n[:2] = drop[:2]\n        n = n.to(x.device)\n        return x * n\n"
    )
    assert findings(FORWARD.format(body=body), "TL304") == []


def test_tl304_no_fix_for_optional_input():
    src = "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def forward(self, x=None):\n        return torch.zeros(3)\n"
    (f,) = findings(src, "TL304")
    assert f.fix is None


@pytest.mark.parametrize(
    "expr,flagged",
    [
        ("x.transpose(1, 2).view(b, t, c)", True),  # merges the swapped dims
        ("x.transpose(1, 2).view(b, c, h, w)", False),  # splits only
        ("x.permute(0, 2, 1, 3).view(b, n, -1)", True),
        ("x.permute(0, 1, 3, 2).view(b, h, -1)", False),  # a safe merge (dims 0, 1) exists: silent
        ("x.permute(0, 2, 3, 1).view(1, -1, d)", False),  # merges dims that stay adjacent
        ("x.permute(2, 0, 1).view(a, b, c)", False),
        ("x.t().view(-1)", True),
        ("x.t().view(m, n)", False),
        ("x.expand(4, -1, -1).view(-1, d)", True),
        ("x.expand(4, n, d).view(4, n, d)", False),
        ("x.transpose(-1, -2).view(b, -1)", False),  # unknown rank: silent
        ("x.transpose(-1, -2).view(-1)", True),
        ("x.transpose(1, 2).contiguous().view(b, -1)", False),
        ("x.transpose(1, 2).view(*shape)", False),
        ("x.transpose(1, 2).view(shape_kv)", False),  # a shape variable of unknown length
        ("x.transpose(2, 3).view(d * b, c, h, w)", False),  # merges leading dims only
        ("x.permute(0, 3, 2, 1).view(-1, s, d)", True),
    ],
)
def test_tl305_merge_heuristic(expr, flagged):
    assert bool(findings(f"y = {expr}\n", "TL305")) is flagged


def test_tl305_variable_flow_is_per_function():
    src = "def a(x):\n    h = x.transpose(0, 1)\n    return h\ndef b(h):\n    return h.view(-1)\n"
    assert findings(src, "TL305") == []


def test_device_rules_fix_the_buggy_fixture_and_reparse():
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "fixtures" / "devices" / "buggy_gpu_training.py"
    classes = [R[c] for c in ("TL301", "TL302", "TL304", "TL305")]
    out = fix_text(str(path), path.read_text(encoding="utf-8"), classes)
    cst.parse_module(out.text)
    assert out.applied == 4 and out.remaining == []
