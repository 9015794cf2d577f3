"""Functions that only ever run with autograd off.

A function is called with autograd off when it is decorated with `torch.no_grad()` /
`inference_mode()` (or `set_grad_enabled(False)`), or when it has call sites in the file and every one of them sits in such a
`with` block, in such a decorated function, or in a function that is itself only called that way
(`evaluate()` called from `with torch.no_grad():` in `main`). A function referred to without being
called (handed to an engine, stored as a callback) may run anywhere, so it does not count. Rules
that flag graph-keeping code (TL117) stay silent in such a function: no graph is ever built there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import libcst as cst

from torchlint.engine.call_sites import Key
from torchlint.engine.callargs import get_arg, is_name
from torchlint.engine.kinds import NO_GRAD, SET_GRAD_ENABLED

if TYPE_CHECKING:
    from torchlint.engine.context import FileContext


@dataclass
class NoGradSites:
    # key -> (under no_grad at the site, the function the site is in)
    calls: dict[Key, list[tuple[bool, cst.FunctionDef | None]]] = field(default_factory=dict)
    referenced: set[Key] = field(default_factory=set)  # named without being called
    decorated: set[cst.FunctionDef] = field(default_factory=set)
    methods: set[cst.FunctionDef] = field(default_factory=set)


def turns_grad_off(expr: cst.BaseExpression, qualname: Callable[[cst.BaseExpression], str | None]) -> bool:
    """A context manager or decorator that turns autograd off: `torch.no_grad()`, `inference_mode()`,
    `set_grad_enabled(False)` (a literal False: a variable may be True in training)."""
    if isinstance(expr, cst.Call) and qualname(expr.func) in SET_GRAD_ENABLED:
        arg = get_arg(expr, "mode", 0)
        return arg is not None and is_name(arg.value, "False")
    return qualname(expr.func if isinstance(expr, cst.Call) else expr) in NO_GRAD


def runs_without_grad(ctx: FileContext, fn: cst.FunctionDef) -> bool:
    """`fn` is decorated with no_grad or only called (in this file) with autograd off."""
    return _without_grad(ctx.no_grad_sites, fn, set())


def _without_grad(sites: NoGradSites, fn: cst.FunctionDef, seen: set[cst.FunctionDef]) -> bool:
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


def index(ctx: FileContext) -> NoGradSites:
    """The file's call sites (call_sites.py) seen from autograd: a site in a lambda, or in a def's or
    class's header, runs at some other time and is left out."""
    index = ctx.call_sites
    sites = NoGradSites(referenced=index.referenced)

    def is_no_grad(expr: cst.BaseExpression) -> bool:
        return turns_grad_off(expr, ctx.qualname)

    for defs in index.functions.values():
        for fn, chain in defs:
            if chain and type(chain[-1]) is cst.ClassDef:
                sites.methods.add(fn)
            if any(is_no_grad(d.decorator) for d in fn.decorators):
                sites.decorated.add(fn)
    for k, calls in index.by_key.items():
        for site in calls:
            if site.in_lambda or site.header:
                continue
            caller = site.function
            off = caller in sites.decorated or any(is_no_grad(i.item) for w in site.withs for i in w.items)
            sites.calls.setdefault(k, []).append((off, caller))
    return sites
