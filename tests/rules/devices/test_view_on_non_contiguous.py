"""TL305 view-on-non-contiguous beyond its embedded examples."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    "expr,flagged",
    [
        ("x.transpose(1, 2).view(b, t, c)", False),  # shape unknown: may be the transposed shape (succeeds)
        ("x.transpose(1, 2).view(b, -1)", True),  # fewer dims: merges the swapped ones
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
def test_tl305_merge_heuristic(expr, flagged, findings):
    assert bool(findings(f"y = {expr}\n", "TL305")) is flagged


def test_tl305_variable_flow_is_per_function(findings):
    src = "def a(x):\n    h = x.transpose(0, 1)\n    return h\ndef b(h):\n    return h.view(-1)\n"
    assert findings(src, "TL305") == []


@pytest.mark.parametrize(
    "body,flagged",
    [
        ("b, t, d = x.shape\ny = x.transpose(1, 2).view(b, d, t)", False),
        ("b, t, d = x.shape\ny = x.transpose(1, 2).view(b, -1, t)", False),
        ("b, t, d = x.shape\ny = x.transpose(-1, -2).view(x.size(0), x.shape[2], t)", False),
        ("b, t, d = x.shape\nh = x.permute(2, 0, 1)\ny = h.view(d, b, t)", False),
        ("b, t, d = x.shape\ny = x.transpose(1, 2).view(b, t, d)", True),  # not the transposed shape
        ("b, t, d = x.shape\ny = x.transpose(1, 2).view(b, d * t)", True),  # merges
        ("b, t, d = x.shape\nx = x.flatten(1)\ny = x.transpose(0, 1).view(-1)", True),  # flattens
        ("b, t, d = x.shape\nx = x.flatten(1)\ny = x.transpose(0, 1).view(b, d)", False),  # x rebound: unknown
        ("b, t, d = x.shape\nt = t // 2\ny = x.transpose(1, 2).view(b, d, t)", False),  # a dim rebound: unknown
        ("y = x.transpose(1, 2).view(b, d, t)", False),  # shape unknown: may ask for the shape it has
    ],
)
def test_tl305_view_keeping_the_transposed_shape(body, flagged, findings):
    src = "def f(x):\n" + "".join(f"    {line}\n" for line in body.splitlines())
    assert bool(findings(src, "TL305")) is flagged


def test_tl305_a_same_rank_view_of_a_transpose_of_unknown_shape_is_not_proven(findings):
    """(B, n_mel, T) transposed, then `.view(B, T // n, -1)`: with n = 1 the view asks for the shape the tensor
    has and succeeds; nothing proves the merge."""
    src = "def parse(x, n):\n    x = x.transpose(1, 2)\n    return x.view(x.size(0), int(x.size(1) / n), -1)\n"
    assert findings(src, "TL305") == []


def test_tl305_is_a_warning_sizes_of_one_merge_fine(findings):
    """`hidden.permute(1, 0, 2).view(1, -1)` succeeds for a batch of one: the claim holds only for sizes > 1."""
    (f,) = findings("y = hidden.permute(1, 0, 2).view(1, -1)\n", "TL305")
    assert f.severity.value == "warning" and "unless they have size 1" in f.message
