"""Containers and totals that outlive a loop iteration.

A value added into `total` / `history.append(...)` / `outputs[k] = ...` keeps whatever it holds
(an autograd graph, a device tensor) alive for as long as the accumulator lives. Rules about
such leaks (TL105 for losses, TL117 for model outputs) flag only accumulators that outlive the
iteration: a `self.` attribute, or a name bound before the innermost loop and never reset
inside it (a list re-created each iteration releases last iteration's values).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from torchlint.engine.names import dotted

if TYPE_CHECKING:
    from torchlint.engine.context import FileContext
    from torchlint.engine.graph_flow import Body


def outlives_iteration(ctx: FileContext, acc: str, body: Body) -> bool:
    """`acc` (a name or `self.x`), accumulated into at the traversal's position in `body`, lives on
    after the innermost loop's iteration: a `self.` attribute, or bound before that loop and only
    ever re-bound inside it by adding to itself (`total = total + x`)."""
    if acc.startswith("self.") and acc.count(".") == 1:
        return True
    loops = [lp for lp in ctx.loops if body.index(lp) is not None]
    if not loops:
        return False
    loop = loops[-1]
    start = body.index(loop)
    assert start is not None
    defs = body.defs.get(acc, ())
    before = any(d.index < start and loop not in d.loops for d in defs)
    reset = any(
        loop in d.loops
        and not (isinstance(d.value, cst.BinaryOperation) and acc in (dotted(d.value.left), dotted(d.value.right)))
        for d in defs
    )
    return before and not reset
