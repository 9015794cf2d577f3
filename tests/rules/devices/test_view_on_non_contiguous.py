"""TL305 view-on-non-contiguous beyond its embedded examples."""

from __future__ import annotations

import pytest


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
        ("b, t, d = x.shape\nx = x.flatten(1)\ny = x.transpose(0, 1).view(b, d)", True),  # x rebound
        ("b, t, d = x.shape\nt = t // 2\ny = x.transpose(1, 2).view(b, d, t)", True),  # a dim rebound
        ("y = x.transpose(1, 2).view(b, d, t)", True),  # shape unknown: unchanged behaviour
    ],
)
def test_tl305_view_keeping_the_transposed_shape(body, flagged, findings):
    src = "def f(x):\n" + "".join(f"    {line}\n" for line in body.splitlines())
    assert bool(findings(src, "TL305")) is flagged
