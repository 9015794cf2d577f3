"""TL711 tensor-identity-comparison beyond its embedded examples."""

from __future__ import annotations

HEAD = "import torch\nfrom torch import nn\nEOS_token = 1\ndecoder = nn.Linear(8, 10)\n"


def test_tl711_topk_index_of_a_model_output_against_a_named_constant(findings, fixed):
    src = (
        HEAD
        + "def step(x):\n    out = decoder(x)\n    v, i = out.topk(1)\n    if i is EOS_token:\n        return True\n"
    )
    assert [f.line for f in findings(src, "TL711")] == [8]
    assert "if i.item() == EOS_token:" in fixed(src, "TL711")


def test_tl711_max_with_dim_and_reversed_sides(findings):
    src = HEAD + "out = decoder(x)\nif 0 is not out.max(1)[1]:\n    pass\n"
    (f,) = findings(src, "TL711")
    assert "always True" in f.message
    assert f.fix is None  # the tensor is on the right: no rewrite


def test_tl711_look_alikes_are_silent(findings):
    src = HEAD + (
        "out = decoder(x)\n"
        "a = out is None\n"
        "b = out.item() is None\n"
        "c = out.shape[0] is 3\n"
        "d = out.size(0) is 3\n"
        "e = token is EOS_token\n"  # token: unknown kind
        "w = out\n"
        "f = w is out\n"
    )
    assert findings(src, "TL711") == []
