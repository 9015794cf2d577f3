"""Functions that only ever run with autograd off.

A function is called with autograd off when it is decorated with `torch.no_grad()` /
`inference_mode()` (or `set_grad_enabled(False)`), or when it has call sites and every one of them sits in such a
`with` block, in such a decorated function, or in a function that is itself only called that way
(`evaluate()` called from `with torch.no_grad():` in `main`). The call sites are calling_context.py's: this
file's and those of the project files that import it. A function referred to without being called (handed to an
engine, stored as a callback) may run anywhere, so it does not count. Rules that flag graph-keeping code (TL117)
stay silent in such a function: no graph is ever built there.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import libcst as cst

from torchlint.engine.core.callargs import get_arg, is_name
from torchlint.engine.semantic.kinds import NO_GRAD, SET_GRAD_ENABLED

if TYPE_CHECKING:
    from torchlint.engine.context import FileContext


def turns_grad_off(expr: cst.BaseExpression, qualname: Callable[[cst.BaseExpression], str | None]) -> bool:
    """A context manager or decorator that turns autograd off: `torch.no_grad()`, `inference_mode()`,
    `set_grad_enabled(False)` (a literal False: a variable may be True in training)."""
    if isinstance(expr, cst.Call) and qualname(expr.func) in SET_GRAD_ENABLED:
        arg = get_arg(expr, "mode", 0)
        return arg is not None and is_name(arg.value, "False")
    return qualname(expr.func if isinstance(expr, cst.Call) else expr) in NO_GRAD


KEPT = object()  # `grad_mode`: the expression leaves the grad mode as it was


def grad_mode(expr: cst.BaseExpression, qualname: Callable[[cst.BaseExpression], str | None]) -> object:
    """What a context manager or decorator does to autograd: True turns it off, False turns it on, None sets
    it to a value not seen (`set_grad_enabled(flag)`), KEPT leaves it as it was."""
    if turns_grad_off(expr, qualname):
        return True
    name = qualname(expr.func if isinstance(expr, cst.Call) else expr)
    if name == "torch.enable_grad":
        return False
    if name in SET_GRAD_ENABLED:
        mode = get_arg(expr, "mode", 0) if isinstance(expr, cst.Call) else None
        return False if mode is not None and is_name(mode.value, "True") else None
    return KEPT


def runs_without_grad(ctx: FileContext, fn: cst.FunctionDef) -> bool:
    """`fn`'s body runs with autograd off: it is decorated so, or every call of it (calling_context.py: in this
    file and the project files that import it) sits where autograd is off."""
    return ctx.calling_contexts.at(fn.body, fn).no_grad
