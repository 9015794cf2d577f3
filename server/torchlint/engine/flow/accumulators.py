"""Containers and totals that outlive a loop iteration.

A value added into `total` / `history.append(...)` / `outputs[k] = ...` keeps whatever it holds
(an autograd graph, a device tensor) alive for as long as the accumulator lives. Rules about
such leaks (TL105 for losses, TL117 for model outputs) flag only accumulators that outlive the
iteration: a `self.` attribute, or a name bound before the innermost loop and never reset
inside it (a list re-created each iteration releases last iteration's values). A loop whose
iterations build one graph (a sequence unrolled over time steps: a forward pass hands its state
to the next one, and nothing back-propagates inside) is not an iteration of that kind: the total
of its steps is the sequence's loss, and the loop that matters is the one around it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from torchlint.engine.core.walk import iter_nodes
from torchlint.engine.flow.graph_flow import names_read
from torchlint.engine.flow.iteration_values import carried_state, cut_by_forward, state_argument
from torchlint.engine.semantic.names import dotted

if TYPE_CHECKING:
    from torchlint.engine.context import FileContext
    from torchlint.engine.flow.blocks import Loop
    from torchlint.engine.flow.graph_flow import Body


def may_outlive_iteration(ctx: FileContext, acc: str) -> bool:
    """What `outlives_iteration` needs before it reads the body: a `self.` attribute, or a loop around the
    traversal's position (the cheap test rules ask first; most accumulations are in no loop)."""
    return (acc.startswith("self.") and acc.count(".") == 1) or bool(ctx.loops)


def outlives_iteration(ctx: FileContext, acc: str, body: Body) -> bool:
    """`acc` (a name or `self.x`), accumulated into at the traversal's position in `body`, lives on
    after the innermost loop's iteration: a `self.` attribute, or bound before that loop and only
    ever re-bound inside it by adding to itself (`total = total + x`)."""
    if acc.startswith("self.") and acc.count(".") == 1:
        return True
    loops = [lp for lp in ctx.loops if body.index(lp) is not None]
    defs = body.defs.get(acc, ())
    for loop in reversed(loops):
        start = body.index(loop)
        assert start is not None
        before = any(d.index < start and loop not in d.loops for d in defs)
        reset = any(
            loop in d.loops
            and not (isinstance(d.value, cst.BinaryOperation) and acc in (dotted(d.value.left), dotted(d.value.right)))
            for d in defs
        )
        if not before or reset:
            return False
        if not _one_graph(body, loop):
            return True
    return False


def _one_graph(body: Body, loop: Loop) -> bool:
    """The iterations of `loop` build one autograd graph: a forward pass hands the state it returns to the
    next iteration's (`out, hidden = decoder(x, hidden)`, no graph cut in its `forward`) and no backward
    runs in the loop. A total over those iterations keeps nothing alive that the state does not."""
    if any(loop in b.loops for b in body.backwards):
        return False
    for n in iter_nodes(loop.body, into_functions=False):
        if isinstance(n, cst.Assign) and state_argument(n) is not None:
            state = carried_state(body, n)
            if state is not None and loop in state.loops and not cut_by_forward(body, state.call):
                return True
    return False


def backpropagated_this_iteration(ctx: FileContext, body: Body, value: cst.BaseExpression) -> bool:
    """`value`, accumulated at the traversal's position in `body`, was already back-propagated earlier in
    the same iteration (`loss.backward()` without `retain_graph`, then `history.append(loss)`): its graph
    is freed, so nobody can back-propagate the accumulator, and returning it does not mean a caller will."""
    index = body.index(value)
    loops = tuple(lp for lp in ctx.loops if body.index(lp) is not None)
    if index is None or not loops:
        return False
    loop = loops[-1]
    start = body.index(loop)
    assert start is not None
    read = {name: body.reaching(name, index) for name in names_read(value)}
    for b in body.backwards:
        if b.retain or b.target is None or not start < b.index < index or b.loops != loops:
            continue
        # only a backward that runs on every pass through the iteration: not under an `if` inside the loop
        if any((body.index(node) or -1) > start for node, _ in b.path if node is not loop):
            continue
        if any(n in read and read[n] is body.reaching(n, b.index) for n in names_read(b.target)):
            return True
    return False
