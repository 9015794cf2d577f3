"""The dimensions of a tensor's shape, when the code names them; which values are flat (N, C) batches.

`b, t, d = x.shape` (or `x.size()`) names every dimension of `x`: a later
`x.size(1)` or `x.shape[1]` is `t`, and `x.transpose(1, 2)` has the shape
`(b, d, t)`. A rule that must know whether a `.view(b, d, t)` changes a shape asks
here. Proven only when the function unpacks `x`'s shape once, binds each dimension
name there alone, and does not rebind `x` between the unpacking and the use;
anything else is unknown (None).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from torchlint.engine.core.callargs import get_arg, int_value
from torchlint.engine.core.walk import iter_nodes
from torchlint.engine.flow.graph_flow import body_of
from torchlint.engine.semantic.names import dotted
from torchlint.engine.semantic.values import current_where

if TYPE_CHECKING:
    from torchlint.engine.context import FileContext


def unpacked_dims(ctx: FileContext, tensor: cst.BaseExpression, use: cst.CSTNode) -> list[str] | None:
    """The names `tensor`'s dimensions were unpacked into before `use`, in order (None: not proven)."""
    name = dotted(tensor)
    owner: cst.CSTNode = ctx.current_function or ctx.module
    if name is None:
        return None
    order = {id(n): i for i, n in enumerate(iter_nodes(owner, into_functions=False))}
    at = order.get(id(use))
    unpacks = [
        n
        for n in iter_nodes(owner, into_functions=False)
        if isinstance(n, cst.Assign) and _shape_of(n.value) == name and len(n.targets) == 1
    ]
    if at is None or len(unpacks) != 1 or order[id(unpacks[0])] > at:
        return None
    target = unpacks[0].targets[0].target
    if not isinstance(target, (cst.Tuple, cst.List)) or not all(isinstance(e.value, cst.Name) for e in target.elements):
        return None
    dims = [e.value.value for e in target.elements if isinstance(e.value, cst.Name)]
    if len(set(dims)) != len(dims):
        return None
    start = order[id(unpacks[0])]
    for n in iter_nodes(owner, into_functions=False):
        bound = _bound_names(n)
        if (bound & set(dims) and n is not unpacks[0]) or (name in bound and start < order[id(n)] < at):
            return None
    return dims


def dim_name(expr: cst.BaseExpression, tensor: str, dims: list[str]) -> str | None:
    """The dimension `expr` denotes: a name among `dims`, `x.size(i)` or `x.shape[i]` of `tensor`."""
    if isinstance(expr, cst.Name):
        return expr.value if expr.value in dims else None
    index = None
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "size":
        if dotted(expr.func.value) == tensor and len(expr.args) == 1:
            index = int_value(expr.args[0].value)
    elif isinstance(expr, cst.Subscript) and _shape_of(expr.value) == tensor and len(expr.slice) == 1:
        element = expr.slice[0].slice
        index = int_value(element.value) if isinstance(element, cst.Index) else None
    if index is None or not -len(dims) <= index < len(dims):
        return None
    return dims[index]


# Modules and functions whose output has the rank of their input (per-feature or element-wise).
RANK_KEEPING_MODULES = frozenset(
    f"torch.nn.{m}"
    for m in "Linear ReLU ReLU6 GELU SiLU Tanh Sigmoid LeakyReLU ELU SELU Mish Softplus Hardswish PReLU Identity "
    "Dropout AlphaDropout Dropout1d Dropout2d Dropout3d BatchNorm1d LayerNorm".split()
)
_RANK_KEEPING_FUNCTIONS = frozenset(
    "relu relu6 gelu silu tanh sigmoid leaky_relu elu selu mish softplus hardswish dropout".split()
)


def flattens(call: cst.Call) -> bool:
    """`nn.Flatten()` (start_dim 1, end_dim -1): its output is (N, C) whatever the input."""
    start = get_arg(call, "start_dim")
    if any(a.keyword is None or a.keyword.value == "end_dim" for a in call.args):
        return False
    return start is None or int_value(start.value) == 1


def is_flat(ctx: FileContext, expr: cst.BaseExpression, use: cst.CSTNode, depth: int = 0) -> bool:
    """`expr` is a 2-D (N, C) tensor, proven by the code that built it: `x.flatten(1)`, `torch.flatten(x, 1)`,
    `x.view(n, -1)`, an `nn.Flatten()`, then anything that keeps the rank (`nn.Linear`, activations)."""
    if depth > 12:
        return False
    if isinstance(expr, cst.Name):
        body = body_of(ctx)
        at = body.index(use)
        d = body.reaching(expr.value, at) if at is not None else None
        return d is not None and d.value is not None and is_flat(ctx, d.value, d.stmt, depth + 1)
    if not isinstance(expr, cst.Call):
        return False
    func = expr.func
    q = ctx.qualname(func) or ""
    positional = [a.value for a in expr.args if a.keyword is None and not a.star]
    if isinstance(func, cst.Attribute) and q == "":
        method = func.attr.value
        if method == "flatten":
            return len(expr.args) == 1 and len(positional) == 1 and int_value(positional[0]) == 1
        if method in ("view", "reshape"):
            return len(expr.args) == 2 and len(positional) == 2
        if method in _RANK_KEEPING_FUNCTIONS and not expr.args:
            return is_flat(ctx, func.value, use, depth + 1)
    if q == "torch.flatten":
        return len(expr.args) == 2 and len(positional) == 2 and int_value(positional[1]) == 1
    if q.rpartition(".")[2] in _RANK_KEEPING_FUNCTIONS and q.rpartition(".")[0] in ("torch", "torch.nn.functional"):
        return bool(positional) and is_flat(ctx, positional[0], use, depth + 1)
    built = ctx.values.builder(func, current_where(ctx)) if isinstance(func, (cst.Name, cst.Attribute)) else None
    if built is None:
        return False
    module = ctx.qualname(built[0].func)
    if module == "torch.nn.Flatten":
        return flattens(built[0])
    if module in RANK_KEEPING_MODULES and positional:
        return is_flat(ctx, positional[0], use, depth + 1)
    return False


def _shape_of(expr: cst.BaseExpression) -> str | None:
    """`x` of `x.shape` / `x.size()`."""
    if isinstance(expr, cst.Attribute) and expr.attr.value == "shape":
        return dotted(expr.value)
    if isinstance(expr, cst.Call) and not expr.args and isinstance(expr.func, cst.Attribute):
        return dotted(expr.func.value) if expr.func.attr.value == "size" else None
    return None


def _bound_names(node: cst.CSTNode) -> set[str]:
    """Names (and dotted attributes) an assignment, loop or `with` binds."""
    targets: list[cst.BaseExpression] = []
    if isinstance(node, cst.Assign):
        targets = [t.target for t in node.targets]
    elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For)):
        targets = [node.target]
    elif isinstance(node, cst.AsName):
        targets = [node.name]
    out: set[str] = set()
    for t in targets:
        for n in [t, *iter_nodes(t)]:
            text = dotted(n) if isinstance(n, (cst.Name, cst.Attribute)) else None
            if text is not None:
                out.add(text)
    return out
