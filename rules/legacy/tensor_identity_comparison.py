"""TL711 tensor-identity-comparison: `is` / `is not` between a tensor and a number, a string or a new tensor"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.rule import UNSAFE, Invalid, NodeFix, Replace, Rule, fix
from torchlint.engine.semantic.kinds import NEW_TENSOR_METHODS, TENSOR_TUPLE_METHODS, Kind
from torchlint.engine.semantic.values import current_where
from torchlint.findings import Severity

_DEPTH = 8


class TensorIdentityComparison(Rule):
    code = "TL711"
    analyses = frozenset({Analysis.CALL_SITES, Analysis.KINDS, Analysis.OWN_SUMMARY, Analysis.SCOPES, Analysis.VALUES})
    requires = (" is ",)
    name = "tensor-identity-comparison"
    message = (
        "`{op}` compares object identity: a tensor is never the same object as {other}, so this is always "
        "{always}; compare values (`{value_op}` with `.item()`)"
    )
    severity = Severity.WARNING
    category = "correctness"
    summary = "`is` / `is not` between a tensor and a number, string or new tensor: always False / True"
    what = (
        "Flags `a is b` / `a is not b` where one side is proven to be a tensor (built by a torch call, a "
        "model's output, an element `t[0]`, a `topk` / `max(dim)` index, `argmax`) and the other is a Python "
        "number or string (a literal or a name bound to one, such as `EOS_token = 1`), `True`/`False`, or a "
        "tensor the comparison itself creates (`t[0] is u[0]`). `x is None` and identity between two named "
        "tensors (`p is self.weight`) are left alone: those can be true."
    )
    why = (
        "Indexing a tensor or calling `argmax`/`topk` creates a new tensor object every time, and a tensor is "
        "never the same object as an `int` or a `str`, so `if top_i is EOS_token:` is always False (checked "
        "on torch 2.13): the decoding loop never stops at the end token and the condition's branch never runs. "
        "It reads like an equality test, and `x.item() is 1` even works for small integers, which is how it "
        "survives review."
    )
    example = """\
import torch

EOS_token = 1
output = torch.randn(1, 10)
top_v, top_i = output.topk(1)
if top_i is EOS_token:
    done = True
"""
    fix_example = """\
import torch

EOS_token = 1
output = torch.randn(1, 10)
top_v, top_i = output.topk(1)
if top_i.item() == EOS_token:
    done = True
"""
    fix_safety = (
        "Unsafe: `.item()` needs a one-element tensor (it raises on more) and syncs with the GPU; the branch "
        "now runs when the values are equal, which changes what the program does (that is the point). Offered "
        "for a comparison with a number only; with a string or another tensor what was meant is not clear."
    )
    VALID = [
        "import torch\nx = torch.zeros(3)\nif x is None:\n    pass\n",
        "import torch\nx = torch.zeros(3)\nif x[0].item() == 1:\n    pass\n",
        # two named tensors can be the same object
        "import torch\nw = torch.zeros(3)\nv = w\nsame = v is w\n",
        # unknown kind: not proven to be a tensor
        "EOS = 1\nif token is EOS:\n    pass\n",
        "import torch\nt = torch.zeros(3)\nif t.shape[0] is 3:\n    pass\n",
    ]
    INVALID = [
        Invalid(
            "import torch\nt = torch.tensor([3, 1])\nif t[0] is 3:\n    pass\n",
            line=3,
            fixed="import torch\nt = torch.tensor([3, 1])\nif t[0].item() == 3:\n    pass\n",
        ),
        Invalid(
            "import torch\nout = torch.randn(2, 5)\nif out.argmax(1)[0] is not 4:\n    pass\n",
            line=3,
            fixed="import torch\nout = torch.randn(2, 5)\nif out.argmax(1)[0].item() != 4:\n    pass\n",
        ),
        Invalid("import torch\nt = torch.zeros(3)\nu = torch.zeros(3)\nsame = t[0] is u[0]\n", line=4),
        Invalid('import torch\nt = torch.zeros(3)\nif t is "pad":\n    pass\n', line=3),
    ]

    def visit_Comparison(self, node: cst.Comparison) -> None:
        left = node.left
        for target in node.comparisons:
            op, right = target.operator, target.comparator
            if isinstance(op, (cst.Is, cst.IsNot)):
                self._check(node, op, left, right)
            left = right

    def _check(
        self, node: cst.Comparison, op: cst.Is | cst.IsNot, left: cst.BaseExpression, right: cst.BaseExpression
    ) -> None:
        if _is_none(left) or _is_none(right):
            return  # `x is None`, the common case: None is neither a tensor nor a Python constant of those
        for tensor, other in ((left, right), (right, left)):
            # the cheap side first: `x is None`, the common case, ends here
            what = self._other(other)
            if what is None and (isinstance(other, cst.Name) or not self._new(other, 0)):
                continue
            if not self._tensor(tensor, 0) or (what is None and not self._new(tensor, 0)):
                continue
            what = what or "a tensor created by the comparison"
            is_not = isinstance(op, cst.IsNot)
            message = self.message.format(
                op="is not" if is_not else "is",
                other=what,
                always="True" if is_not else "False",
                value_op="!=" if is_not else "==",
            )
            self.report(node, message, fix=self._fix(node, tensor, other, is_not, what))
            return

    def _fix(
        self, node: cst.Comparison, tensor: cst.BaseExpression, other: cst.BaseExpression, is_not: bool, what: str
    ) -> NodeFix | None:
        if len(node.comparisons) != 1 or what != "a number" or tensor is not node.left:
            return None
        value = cst.Call(cst.Attribute(tensor, cst.Name("item")))
        space = cst.SimpleWhitespace(" ")
        op: cst.BaseCompOp = (
            cst.NotEqual(whitespace_before=space, whitespace_after=space)
            if is_not
            else cst.Equal(whitespace_before=space, whitespace_after=space)
        )
        new = node.with_changes(left=value, comparisons=[node.comparisons[0].with_changes(operator=op)])
        return fix(
            f"Compare with `{'!=' if is_not else '=='}` and `.item()`",
            Replace(node, new),
            applicability=UNSAFE,
            risk="the branch now runs when the values are equal",
        )

    def _other(self, expr: cst.BaseExpression) -> str | None:
        """What a Python constant side is: "a number", "a string", or None (not one)."""
        if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
            return "a string"
        if isinstance(expr, cst.Name) and expr.value in ("True", "False"):
            return "a bool"
        if isinstance(expr, (cst.Integer, cst.Float)) or (
            isinstance(expr, cst.UnaryOperation) and isinstance(expr.expression, (cst.Integer, cst.Float))
        ):
            return "a number"
        if isinstance(expr, cst.Name) and self.ctx.kind(expr) == Kind.NUMBER:
            return "a number"
        return None

    def _tensor(self, expr: cst.BaseExpression, depth: int) -> bool:
        return bool(self.ctx.kind(expr) & Kind.TENSOR) or self._new(expr, depth)

    def _new(self, expr: cst.BaseExpression, depth: int) -> bool:
        """`expr` evaluates to a tensor object made by this evaluation (an element, an index, a reduction)."""
        if depth > _DEPTH:
            return False
        if isinstance(expr, cst.Name):
            found = self.ctx.values.value_of(expr, current_where(self.ctx))
            return found is not None and found[0] is not expr and self._new(found[0], depth + 1)
        if isinstance(expr, cst.Subscript):
            value = expr.value
            receiver = _receiver(value)
            if _method(value) in TENSOR_TUPLE_METHODS and receiver is not None:
                return self._tensor(receiver, depth + 1)
            if _shape(value):
                return False
            return self._tensor(value, depth + 1)
        receiver = _receiver(expr)
        if _method(expr) in NEW_TENSOR_METHODS | TENSOR_TUPLE_METHODS and receiver is not None:
            return self._tensor(receiver, depth + 1)
        return False


def _is_none(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"


def _method(expr: cst.BaseExpression) -> str | None:
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        return expr.func.attr.value
    return None


def _receiver(call: cst.BaseExpression) -> cst.BaseExpression | None:
    return call.func.value if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) else None


def _shape(expr: cst.BaseExpression) -> bool:
    """`x.shape` / `x.size()`: a tuple of ints, not a tensor."""
    return (isinstance(expr, cst.Attribute) and expr.attr.value == "shape") or _method(expr) == "size"
