"""What more than one legacy rule needs: which tensors are proven 0-dim (TL708 reports `loss.data[0]`
on them, and TL703 leaves that spot to it)."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from torchlint.engine.context import FileContext
from torchlint.engine.core.callargs import get_arg, has_star, is_name, string_value, with_keyword, without_arg
from torchlint.engine.flow.graph_flow import Body, assignments, body_of
from torchlint.engine.semantic.kinds import LOSS_FUNCTIONS, Kind, kind_from_qualname

# Methods and torch functions whose result has the shape of their (tensor) receiver / only argument.
_SHAPE_KEEPING = frozenset(
    "detach cpu cuda to float double half bfloat16 clone contiguous abs sqrt exp log neg sigmoid tanh relu "
    "square".split()
)
_SCALAR_REDUCTIONS = frozenset({"mean", "sum"})
# Positional arguments a functional loss may take before `reduce`/`reduction` (mse_loss(input, target,
# size_average, reduce, reduction)): more than this and the reduction may be passed positionally.
_LOSS_POSITIONALS = 3


@dataclass(frozen=True)
class ZeroDimIndex:
    """`x.data[0]` / `x[0]` on a 0-dim `x`: the receiver, whether `.data` was read, and why it is 0-dim."""

    receiver: cst.BaseExpression
    through_data: bool
    why: str


def zero_dim_index(ctx: FileContext, node: cst.Subscript) -> ZeroDimIndex | None:
    """`node` indexes a tensor proven 0-dim with an integer: an IndexError since PyTorch 0.5."""
    if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
        return None
    index = node.slice[0].slice.value
    if isinstance(index, cst.UnaryOperation) and isinstance(index.operator, cst.Minus):
        index = index.expression
    if not isinstance(index, cst.Integer):
        return None
    receiver, through_data = node.value, False
    if isinstance(receiver, cst.Attribute) and receiver.attr.value == "data":
        receiver, through_data = receiver.value, True
    if not _provable(receiver):
        return None  # before reading the function's flow (body_of), the costly part
    body = body_of(ctx)
    at = body.index(node)
    if at is None:
        return None
    why = _ZeroDim(ctx, body).why(receiver, at)
    return ZeroDimIndex(receiver, through_data, why) if why is not None else None


def _provable(expr: cst.BaseExpression) -> bool:
    """An expression of a shape `_ZeroDim.why` can prove 0-dim (`x.shape[0]`, `self.w[0]` are not)."""
    while True:
        if isinstance(expr, cst.Attribute) and expr.attr.value == "data":
            expr = expr.value
        elif isinstance(expr, cst.UnaryOperation):
            expr = expr.expression
        else:
            break
    if isinstance(expr, cst.BinaryOperation):
        return _provable(expr.left) or _provable(expr.right)
    return isinstance(expr, cst.Name) or isinstance(expr, cst.Call) and not has_star(expr)


class _ZeroDim:
    """Why a value at statement `index` of `body` is a 0-dim tensor (None: not proven)."""

    def __init__(self, ctx: FileContext, body: Body) -> None:
        self.ctx = ctx
        self.body = body

    def why(self, expr: cst.BaseExpression, index: int, depth: int = 0) -> str | None:
        if depth > 20:
            return None
        if isinstance(expr, cst.Name):
            d = self.body.reaching(expr.value, index)
            return self.why(d.value, d.index, depth + 1) if d is not None and d.value is not None else None
        if isinstance(expr, cst.Attribute) and expr.attr.value == "data":
            return self.why(expr.value, index, depth + 1)
        if isinstance(expr, cst.UnaryOperation):
            return self.why(expr.expression, index, depth + 1)
        if isinstance(expr, cst.BinaryOperation):
            sides = [self.why(side, index, depth + 1) for side in (expr.left, expr.right)]
            numbers = [self._number(side, index) for side in (expr.left, expr.right)]
            if all(s is not None or n for s, n in zip(sides, numbers)) and any(s is not None for s in sides):
                return next(s for s in sides if s is not None)
            return None
        if isinstance(expr, cst.Call) and not has_star(expr):
            return self._call(expr, index, depth)
        return None

    def _number(self, expr: cst.BaseExpression, index: int) -> bool:
        """A Python number (a 0-dim tensor combined with one stays 0-dim)."""
        if isinstance(expr, cst.UnaryOperation):
            expr = expr.expression
        if isinstance(expr, (cst.Integer, cst.Float)):
            return True
        if isinstance(expr, cst.Name):
            d = self.body.reaching(expr.value, index)
            return d is not None and isinstance(d.value, (cst.Integer, cst.Float))
        return False

    def _call(self, call: cst.Call, index: int, depth: int) -> str | None:
        q = self.ctx.qualname(call.func)
        args = [a.value for a in call.args if a.keyword is None]
        if q is not None:
            head, _, last = q.rpartition(".")
            if head == "torch.nn.functional" and last in LOSS_FUNCTIONS:
                scalar = len(args) <= _LOSS_POSITIONALS and _scalar_reduction(call)
                return f"`{last}`'s reduced output" if scalar else None
            if head == "torch" and len(args) == 1 and len(call.args) == 1:
                if last in _SCALAR_REDUCTIONS:
                    return f"a full `torch.{last}`"
                if last in _SHAPE_KEEPING:
                    return self.why(args[0], index, depth + 1)
            return None
        func = call.func
        if isinstance(func, cst.Attribute):
            method, receiver = func.attr.value, func.value
            if method in _SCALAR_REDUCTIONS and not call.args:
                if self.ctx.kind(receiver) & (Kind.TENSOR | Kind.LOSS) or self.why(receiver, index, depth + 1):
                    return f"a full `.{method}()`"
                return None
            if method in _SHAPE_KEEPING:
                return self.why(receiver, index, depth + 1)
        if self._scalar_criterion(func, index):
            return "a criterion's reduced output"
        return None

    def _scalar_criterion(self, func: cst.BaseExpression, index: int) -> bool:
        """`func` is a `torch.nn.*Loss` module built with a reducing `reduction` (every construction seen)."""
        if isinstance(func, cst.Call):
            constructions: list[cst.BaseExpression | None] = [func]
        else:
            if not self.ctx.kind(func) & Kind.CRITERION:
                return False
            constructions = [d.value for _, d in assignments(self.ctx, func, index)]
        return bool(constructions) and all(
            isinstance(c, cst.Call)
            and (q := self.ctx.qualname(c.func)) is not None
            and kind_from_qualname(q) & Kind.CRITERION
            and not has_star(c)
            and _scalar_reduction(c)
            for c in constructions
        )


def _scalar_reduction(call: cst.Call) -> bool:
    """No `reduce=` but True, and a `reduction=` that is absent or the literal "mean"/"sum"/"batchmean"."""
    reduce = get_arg(call, "reduce")
    if reduce is not None and not is_name(reduce.value, "True"):
        return False
    reduction = get_arg(call, "reduction")
    return reduction is None or string_value(reduction.value) in ("mean", "sum", "batchmean")


# -- TL701: the loss arguments `size_average=` / `reduce=` that `reduction=` replaced (deprecated since 0.4.1)
_LEGACY_REDUCTION = ("size_average", "reduce")


@dataclass(frozen=True)
class LegacyReduction:
    """A loss call with `size_average=` / `reduce=`: the `reduction` they mean, and the call rewritten to it."""

    reduction: str | None  # None: not a literal combination
    rewritten: cst.Call | None


def legacy_reduction(ctx: FileContext, call: cst.Call) -> LegacyReduction | None:
    """`call` builds a torch loss module or calls a functional loss with the legacy reduction keywords."""
    legacy = [a for a in call.args if a.keyword is not None and a.keyword.value in _LEGACY_REDUCTION]
    q = ctx.qualname(call.func)
    if not legacy or q is None:
        return None
    head, _, last = q.rpartition(".")
    if not (kind_from_qualname(q) & Kind.CRITERION or (head == "torch.nn.functional" and last in LOSS_FUNCTIONS)):
        return None
    flags = {}
    for arg in legacy:
        value = arg.value
        if not (is_name(value, "True") or is_name(value, "False") or is_name(value, "None")):
            return LegacyReduction(None, None)
        flags[cst.ensure_type(arg.keyword, cst.Name).value] = not is_name(value, "False")
    size_average, reduce = flags.get("size_average", True), flags.get("reduce", True)
    reduction = "none" if not reduce else "mean" if size_average else "sum"
    if get_arg(call, "reduction") is not None or has_star(call):
        return LegacyReduction(reduction, None)
    kept = call
    for arg in legacy:
        kept = without_arg(
            kept,
            next(
                a
                for a in kept.args
                if a.keyword is not None and a.keyword.value == cst.ensure_type(arg.keyword, cst.Name).value
            ),
        )
    return LegacyReduction(reduction, with_keyword(kept, "reduction", f'"{reduction}"'))
