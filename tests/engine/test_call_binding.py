"""Binding call arguments by name (engine/core/call_binding.py), the ground of API-migration fixes."""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.call_binding import bind, rebuild, signature

OLD = signature("enabled=True, dtype=torch.float16, cache_enabled=True")
NEW = signature("device_type, dtype=None, enabled=True, cache_enabled=None")


def _call(text: str) -> cst.Call:
    node = cst.parse_expression(text)
    assert isinstance(node, cst.Call)
    return node


def _code(node: cst.CSTNode | None) -> str | None:
    return None if node is None else cst.Module([]).code_for_node(node)


def test_bind_names_positionals_and_refuses_what_it_cannot_place():
    assert {n: _code(a.value) for n, a in bind(_call("f(flag, torch.half)"), OLD).items()} == {
        "enabled": "flag",
        "dtype": "torch.half",
    }
    assert bind(_call("f(*xs)"), OLD) is None
    assert bind(_call("f(flag, enabled=True)"), OLD) is None  # bound twice
    assert bind(_call("f(a, b, c, d)"), OLD) is None  # more positionals than parameters
    assert bind(_call("f(fast=True)"), OLD) is None
    assert bind(_call("f(x, fast=True)"), signature("x, **kwargs")) is not None  # `**kwargs` takes it


def test_rebuild_places_arguments_by_name_keeping_their_text():
    same = ("dtype", "cache_enabled")
    out = rebuild(_call("g(flag,  # on?\n  dtype=d)"), OLD, NEW, "h", leading=('"cuda"',), same_defaults=same)
    assert _code(out) == 'h("cuda", enabled=flag,  # on?\n  dtype=d)'
    assert _code(rebuild(_call("g()"), OLD, NEW, "h", leading=('"cuda"',), same_defaults=same)) == 'h("cuda")'


def test_rebuild_refuses_a_default_that_changes_unless_documented_equal():
    assert rebuild(_call("g(flag)"), OLD, NEW, "h", leading=('"cuda"',)) is None  # dtype: float16 vs None
    assert rebuild(_call("g(x)"), signature("x"), signature("y"), "h") is None  # `x` has no place in `h`
