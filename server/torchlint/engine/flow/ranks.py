"""Which process a value or an `if` belongs to: the rank read from the launcher's environment or the
process group, and tests that hold on one process only (`if dist.get_rank() == 0:`).

Evidence only: a rank is `dist.get_rank()`, an environment read of `RANK` / `LOCAL_RANK`, or a name
assigned from one of them in the body that asks; `accelerator.is_main_process` needs an Accelerator.
A variable merely called `rank` is unknown.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import libcst as cst

from torchlint.engine.core.callargs import int_value, string_value
from torchlint.engine.core.walk import iter_nodes
from torchlint.engine.semantic.kinds import Kind

if TYPE_CHECKING:
    from torchlint.engine.context import FileContext
    from torchlint.engine.flow.graph_flow import Body

_ENV_READS = frozenset({"os.environ.get", "os.getenv"})
_RANK_CALLS = frozenset({"torch.distributed.get_rank"})
_RANK_KEYS = frozenset({"RANK", "LOCAL_RANK"})
# An Accelerator's / Fabric's "this is the main process" flags.
_MAIN_PROCESS_FLAGS = frozenset({"is_main_process", "is_local_main_process", "is_global_zero"})


def env_key(ctx: FileContext, expr: cst.BaseExpression) -> cst.SimpleString | None:
    """The key literal of `os.environ["X"]`, `os.environ.get("X")` or `os.getenv("X")` in `expr`."""
    for n in (expr, *iter_nodes(expr, into_functions=False)):
        key = None
        if isinstance(n, cst.Subscript) and ctx.qualname(n.value) == "os.environ" and len(n.slice) == 1:
            index = n.slice[0].slice
            key = index.value if isinstance(index, cst.Index) else None
        elif isinstance(n, cst.Call) and ctx.qualname(n.func) in _ENV_READS and n.args:
            key = n.args[0].value
        if isinstance(key, cst.SimpleString):
            return key
    return None


def is_rank(ctx: FileContext, body: Body | None, expr: cst.BaseExpression, index: int) -> bool:
    """`expr` (at statement `index` of `body`) is this process's rank (without a body, names are unknown)."""
    if isinstance(expr, cst.Call) and ctx.qualname(expr.func) in _RANK_CALLS:
        return True
    key = env_key(ctx, expr)
    if key is not None:
        return string_value(key) in _RANK_KEYS
    if isinstance(expr, cst.Name) and body is not None:
        d = body.reaching(expr.value, index)
        return d is not None and d.value is not None and d.index < index and is_rank(ctx, body, d.value, d.index)
    return False


def rank_zero_test(
    ctx: FileContext,
    body: Body | None,
    test: cst.BaseExpression,
    index: int,
    kind: Callable[[cst.BaseExpression], Kind] | None = None,
) -> bool:
    """`test` holds on one process only: it compares the rank with 0 or reads a main-process flag. `kind`
    (default: the body's) tells whether a flag's owner is an Accelerator."""
    kind_of = kind or (body.kind if body is not None else None)
    for n in (test, *iter_nodes(test, into_functions=False)):
        if isinstance(n, cst.Attribute) and n.attr.value in _MAIN_PROCESS_FLAGS and kind_of is not None:
            if kind_of(n.value) & Kind.ACCELERATOR:
                return True
        if isinstance(n, cst.Comparison) and len(n.comparisons) == 1:
            target = n.comparisons[0]
            if isinstance(target.operator, cst.Equal):
                sides = (n.left, target.comparator)
                if any(int_value(a) == 0 and is_rank(ctx, body, b, index) for a, b in (sides, sides[::-1])):
                    return True
    return False
