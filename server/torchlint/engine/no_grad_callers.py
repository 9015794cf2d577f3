"""Functions that only ever run with autograd off.

A function is called with autograd off when it is decorated with `torch.no_grad()` /
`inference_mode()`, or when it has call sites in the file and every one of them sits in such a
`with` block, in such a decorated function, or in a function that is itself only called that way
(`evaluate()` called from `with torch.no_grad():` in `main`). A function referred to without being
called (handed to an engine, stored as a callback) may run anywhere, so it does not count. Rules
that flag graph-keeping code (TL117) stay silent in such a function: no graph is ever built there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import libcst as cst

from torchlint.engine.graph_flow import NO_GRAD
from torchlint.engine.walk import children

if TYPE_CHECKING:
    from torchlint.engine.context import FileContext

Key = tuple[str, str]  # ("name", f) for `f(...)`, ("self", m) for `self.m(...)`


@dataclass
class _Sites:
    # key -> (under no_grad at the site, the function the site is in)
    calls: dict[Key, list[tuple[bool, cst.FunctionDef | None]]] = field(default_factory=dict)
    referenced: set[Key] = field(default_factory=set)  # named without being called
    decorated: set[cst.FunctionDef] = field(default_factory=set)
    methods: set[cst.FunctionDef] = field(default_factory=set)


def runs_without_grad(ctx: FileContext, fn: cst.FunctionDef) -> bool:
    """`fn` is decorated with no_grad or only called (in this file) with autograd off."""
    sites = ctx.shared("no_grad_callers", lambda: _index(ctx))
    return _without_grad(sites, fn, set())


def _without_grad(sites: _Sites, fn: cst.FunctionDef, seen: set[cst.FunctionDef]) -> bool:
    if fn in sites.decorated:
        return True
    if fn in seen:
        return False
    seen.add(fn)
    key = ("self" if fn in sites.methods else "name", fn.name.value)
    calls = sites.calls.get(key, [])
    if not calls or key in sites.referenced:
        return False
    return all(off or (caller is not None and _without_grad(sites, caller, seen)) for off, caller in calls)


def _index(ctx: FileContext) -> _Sites:
    sites = _Sites()

    def is_no_grad(expr: cst.BaseExpression) -> bool:
        return ctx.qualname(expr.func if isinstance(expr, cst.Call) else expr) in NO_GRAD

    def walk(node: cst.CSTNode, off: bool, fn: cst.FunctionDef | None, in_class: bool) -> None:
        for child in children(node):
            if isinstance(child, cst.FunctionDef):
                if in_class:
                    sites.methods.add(child)
                decorated = any(is_no_grad(d.decorator) for d in child.decorators)
                if decorated:
                    sites.decorated.add(child)
                walk(child.body, decorated, child, False)
            elif isinstance(child, cst.ClassDef):
                walk(child.body, False, None, True)
            elif isinstance(child, cst.With):
                for item in child.items:
                    walk(item, off, fn, False)
                walk(child.body, off or any(is_no_grad(i.item) for i in child.items), fn, False)
            elif isinstance(child, cst.Call):
                key = _key(child.func)
                if key is not None:
                    sites.calls.setdefault(key, []).append((off, fn))
                    if isinstance(child.func, cst.Attribute):
                        walk(child.func.value, off, fn, False)
                else:
                    walk(child.func, off, fn, False)
                for a in child.args:
                    walk(a, off, fn, False)
            elif isinstance(child, (cst.Name, cst.Attribute)):
                key = _key(child)
                if key is not None:
                    sites.referenced.add(key)
                if isinstance(child, cst.Attribute):
                    walk(child.value, off, fn, False)
            elif not isinstance(child, cst.Lambda):
                walk(child, off, fn, in_class)

    walk(ctx.module, False, None, False)
    return sites


def _key(func: cst.BaseExpression) -> Key | None:
    if isinstance(func, cst.Name):
        return ("name", func.value)
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
        return ("self", func.attr.value)
    return None
