"""TL305 view-on-non-contiguous: `.view()` right after transpose/permute/expand"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.callargs import int_value
from torchlint.engine.rule import SAFE, Invalid, Replace, Rule, fix
from torchlint.engine.semantic.names import dotted, target_names
from torchlint.engine.torch.shapes import dim_name, unpacked_dims
from torchlint.findings import Severity

_NON_CONTIGUOUS_METHODS = frozenset(
    {"transpose", "permute", "t", "expand", "swapaxes", "swapdims", "movedim", "moveaxis"}
)
_NON_CONTIGUOUS_ATTRS = frozenset({"T", "mT", "H", "mH"})
# what made a tensor strided: a call of one of those methods (`x.transpose(1, 2)`) or one of those attributes
StridedOp = cst.Call | cst.Attribute


class ViewOnNonContiguous(Rule):
    code = "TL305"
    requires = ("view",)
    name = "view-on-non-contiguous"
    message = (
        "`.view(...)` merges dimensions that `.{op}` left non-contiguous: unless they have size 1, it raises "
        "`RuntimeError: view size is not compatible with input tensor's size and stride`; use `.reshape(...)`"
    )
    # a warning: sizes are unknown statically, and a merge of dimensions of size 1 (a batch of one) succeeds
    severity = Severity.WARNING
    category = "correctness"
    summary = "`.view()` right after transpose/permute/expand"
    what = (
        "Flags `.view(shape)` applied to the result of `.transpose`, `.permute`, `.t()`, `.mT`, `.expand` "
        "and similar (directly, or through a variable) with no `.contiguous()` in between, when the view "
        "must merge dimensions the operation made non-adjacent (flattening; fewer dimensions than "
        "`permute`/`expand` produced; a transpose's dimensions merged). Splitting views are valid and not flagged, "
        "and so is a view that asks for exactly the shape the transposed tensor has, when the code proves it: "
        "after `b, t, d = x.shape`, `x.transpose(1, 2).view(b, d, t)` changes nothing and succeeds. When the "
        "shape is unknown, a view with as many dimensions as the transposed tensor may be asking for the shape "
        "it already has, and is not flagged. A warning, not an error: the sizes are not known statically, and "
        "merging dimensions of size 1 (a batch of one sequence) succeeds."
    )
    why = (
        "These operations return strided views whose memory is not laid out in row-major order; `.view` "
        "needs compatible strides and raises at run time. `.reshape` copies only when it must."
    )
    example = "y = x.transpose(1, 2).view(b, -1)\n"
    fix_example = "y = x.transpose(1, 2).reshape(b, -1)\n"
    fix_safety = (
        "Safe: `.reshape` returns a view whenever `.view` would have succeeded, and a copy otherwise — "
        "where the copy shares no memory with the input (in-place writes to it no longer reach `x`)."
    )
    VALID = [
        "y = x.transpose(1, 2).contiguous().view(b, t, -1)\n",
        "y = x.permute(0, 2, 1).reshape(b, -1)\n",
        "import torch\ny = x.transpose(0, 1).view(torch.int16)\n",
        "y = x.view(b, -1).transpose(0, 1)\n",
        "h = x.transpose(1, 2)\nh = h.contiguous()\nout = h.view(b, -1)\n",
        # splitting a dimension is always a valid view
        "feat = tokens.transpose(1, 2).view(B, C, H, W)\n",
        # merging dims 2 and 3 of the input, which stay adjacent
        "emb = pos.permute(0, 2, 3, 1).view(1, -1, dim)\n",
        "q = q.view(B, N, H, D).transpose(1, 2)\nk = k.view(B, N, H, D).transpose(1, 2)\n",
        # the view keeps the transposed shape (b, d, t) exactly: nothing to merge
        "def f(x):\n    b, t, d = x.shape\n    return x.transpose(1, 2).view(b, d, t)\n",
    ]
    INVALID = [
        Invalid(
            "out = attn.permute(0, 2, 1, 3).view(b, n, -1)\n",
            line=1,
            fixed="out = attn.permute(0, 2, 1, 3).reshape(b, n, -1)\n",
        ),
        Invalid(
            "def f(x):\n    h = x.transpose(1, 2)\n    return h.view(h.size(0), -1)\n",
            line=3,
            fixed="""\
def f(x):
    h = x.transpose(1, 2)
    return h.reshape(h.size(0), -1)
""",
        ),
        Invalid("y = w.mT.view(-1)\n", line=1, fixed="y = w.mT.reshape(-1)\n"),
        # the shape is known, and the view merges the swapped dims
        Invalid(
            "def f(x):\n    b, t, d = x.size()\n    return x.transpose(1, 2).view(b, t, d)\n",
            line=3,
            fixed="def f(x):\n    b, t, d = x.size()\n    return x.transpose(1, 2).reshape(b, t, d)\n",
        ),
    ]

    def visit_Module(self, node: cst.Module) -> None:
        self.strided: dict[
            tuple[cst.FunctionDef | None, str], StridedOp
        ] = {}  # (function, name) -> the op that made it strided

    def _op(self, expr: cst.BaseExpression) -> StridedOp | None:
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
            if expr.func.attr.value in _NON_CONTIGUOUS_METHODS:
                return expr
        if isinstance(expr, cst.Attribute) and expr.attr.value in _NON_CONTIGUOUS_ATTRS:
            return expr
        if isinstance(expr, cst.Name):
            return self.strided.get((self.ctx.current_function, expr.value))
        return None

    def leave_Assign(self, node: cst.Assign) -> None:
        # after the value: `q = q.view(...).transpose(1, 2)` views `q` before it becomes strided
        for t in node.targets:
            if isinstance(t.target, cst.Name):
                key = (self.ctx.current_function, t.target.value)
                op = self._op(node.value) if not isinstance(node.value, cst.Name) else None
                if op is not None:
                    self.strided[key] = op
                else:
                    self.strided.pop(key, None)
            else:  # `k, v = qkv.split(...)`: rebound, whatever they were
                for name in target_names(t.target):
                    self.strided.pop((self.ctx.current_function, name), None)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value != "view" or not node.args:
            return
        if any(a.star or a.keyword for a in node.args):
            return
        if len(node.args) == 1:
            q = self.ctx.qualname(node.args[0].value) or ""
            if q.startswith("torch.") or isinstance(node.args[0].value, cst.SimpleString):
                return  # a dtype view
        shape = [a.value for a in node.args]
        if len(shape) == 1 and isinstance(shape[0], (cst.Tuple, cst.List)):
            shape = [e.value for e in shape[0].elements]
        elif len(shape) == 1 and not isinstance(shape[0], (cst.Integer, cst.UnaryOperation, cst.BinaryOperation)):
            return  # `.view(shape_kv)`: a shape held in a variable, of unknown length
        op = self._op(func.value)
        if op is None or not _must_merge(op, shape):
            return
        known = self._reordering(op)
        if (known is None and _may_keep_rank(op, shape)) or (known is not None and _keeps_shape(known, shape)):
            return
        name = _method(op).attr.value + "(...)" if isinstance(op, cst.Call) else op.attr.value
        self.report(
            node,
            self.message.format(op=name),
            fix=fix("Use `.reshape(...)`", Replace(func.attr, "reshape"), applicability=SAFE),
        )

    def _reordering(self, op: StridedOp) -> tuple[str, list[str], list[str]] | None:
        """The receiver's name, its dimensions (`b, t, d = x.shape`) and the op's reordering of them, when the
        code names them (shapes.py); None: the shape is unknown."""
        receiver = _method(op).value if isinstance(op, cst.Call) else op.value
        tensor = dotted(receiver)
        dims = unpacked_dims(self.ctx, receiver, op) if tensor is not None else None
        after = _reordered(op, dims) if dims is not None and tensor is not None else None
        return (tensor, dims, after) if tensor is not None and dims is not None and after is not None else None


def _keeps_shape(known: tuple[str, list[str], list[str]], shape: list[cst.BaseExpression]) -> bool:
    """`x.transpose(1, 2).view(b, d, t)` after `b, t, d = x.shape`: the view asks for the shape the
    transposed tensor already has, which never needs to merge memory (valid on any strides)."""
    tensor, dims, after = known
    if len(after) != len(shape):
        return False
    wanted = [None if int_value(d) == -1 else dim_name(d, tensor, dims) for d in shape]
    inferred = [i for i, d in enumerate(shape) if int_value(d) == -1]
    if len(inferred) > 1 or any(w is None for i, w in enumerate(wanted) if i not in inferred):
        return False
    return all(w == a for i, (w, a) in enumerate(zip(wanted, after)) if i not in inferred)


def _may_keep_rank(op: StridedOp, shape: list[cst.BaseExpression]) -> bool:
    """Shapes unknown, a view with as many dimensions as the transposed tensor may have: it may ask for the
    very shape that tensor has (tacotron2's `.transpose(1, 2).view(B, T // n, -1)` with n = 1), which
    succeeds on any strides. Nothing proves a merge."""
    if not isinstance(op, cst.Call) or _method(op).attr.value not in ("transpose", "swapaxes", "swapdims"):
        return False
    dims = _int_args(op)
    return dims is not None and len(dims) == 2 and min(dims) >= 0 and len(shape) == max(dims) + 1


def _reordered(op: StridedOp, dims: list[str]) -> list[str] | None:
    """The dimensions after a transpose-like op (None: not a pure reordering, or unknown arguments)."""
    rank = len(dims)
    if isinstance(op, cst.Attribute):
        if op.attr.value == "T":
            return dims[::-1]
        return [*dims[:-2], dims[-1], dims[-2]] if op.attr.value == "mT" and rank >= 2 else None
    method = _method(op).attr.value
    args = _int_args(op) if op.args else []
    if args is None or any(not -rank <= a < rank for a in args):
        return None
    args = [a % rank for a in args]
    if method == "t" and not args and rank == 2:
        return dims[::-1]
    if method in ("transpose", "swapaxes", "swapdims") and len(args) == 2:
        out = list(dims)
        out[args[0]], out[args[1]] = out[args[1]], out[args[0]]
        return out
    if method == "permute" and sorted(args) == list(range(rank)):
        return [dims[a] for a in args]
    return None


def _method(op: cst.Call) -> cst.Attribute:
    """`x.transpose` of a strided op's call: `_op` keeps calls of a method only."""
    return cst.ensure_type(op.func, cst.Attribute)


def _is_product(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply)


def _int_args(call: cst.Call) -> list[int] | None:
    args = [a.value for a in call.args]
    if len(args) == 1 and isinstance(args[0], (cst.Tuple, cst.List)):
        args = [e.value for e in args[0].elements]
    values = [v for v in (int_value(a) for a in args) if v is not None]
    return None if len(values) != len(args) or any(a.star for a in call.args) else values


def _must_merge(op: StridedOp, shape: list[cst.BaseExpression]) -> bool:
    """Does this `.view` have to merge dimensions the op made non-adjacent in memory?

    Splitting a dimension is always a valid view; only merges can fail. Without
    shapes we decide from ranks: a view to fewer dimensions than the op's result
    must merge, and it fails when no merge of memory-adjacent dimensions is left.
    """
    view_rank = len(shape)
    if view_rank == 1:
        return True  # flattening a transposed/expanded tensor
    if not isinstance(op, cst.Call):
        return False
    method = _method(op).attr.value
    dims = _int_args(op)
    if method == "permute" and dims:
        if view_rank >= len(dims):
            return False
        adjacent = sum(1 for a, b in zip(dims, dims[1:]) if b == a + 1)
        return adjacent < len(dims) - view_rank
    if method in ("transpose", "swapaxes", "swapdims") and dims and len(dims) == 2 and min(dims) >= 0:
        # `.view(depth * batch, c, h, w)`: a product before the swapped dims merges leading dims (safe),
        # so the input has more dimensions than the view and the swapped ones may just be split
        if any(_is_product(d) for d in shape[: min(dims)]):
            return False
        return dims[0] != dims[1] and view_rank <= max(dims) + 1
    if method == "expand" and dims is not None and len(dims) > 1:
        return view_rank < len(dims)
    return False
