"""The dimensions of a tensor's shape, when the code names them.

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

from torchlint.engine.callargs import int_value
from torchlint.engine.names import dotted
from torchlint.engine.walk import iter_nodes

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
