"""TL122 assert-on-tensor-in-forward: an assert on a tensor value in forward() or a training step"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.flow.loop_events import Event, EventKind
from torchlint.engine.rule import Invalid, Rule
from torchlint.engine.semantic.kinds import TENSOR_PREDICATES, Kind
from torchlint.findings import Severity

from ._helpers import is_test_file

# What reads a tensor's metadata (kept on the host) rather than its values.
_METADATA_ATTRS = frozenset({"shape", "dtype", "device", "ndim", "is_cuda", "requires_grad", "layout"})
_METADATA_METHODS = frozenset({"size", "dim", "numel", "ndimension", "is_contiguous", "stride", "type"})
_REDUCTIONS = frozenset({"all", "any", "item", "sum", "max", "min", "mean"})


def _steps(events: list[Event]) -> bool:
    """One iteration (or call) runs a backward pass itself, not in a loop nested inside it."""
    return any(e.kind is EventKind.BACKWARD and e.depth == 0 for e in events)


class AssertOnTensorInForward(Rule):
    code = "TL122"
    analyses = frozenset(
        {
            Analysis.CALL_SITES,
            Analysis.IS_PROGRAM,
            Analysis.KINDS,
            Analysis.LOCAL_FUNCTIONS,
            Analysis.LOOP_ANALYSIS,
            Analysis.OWN_SUMMARY,
            Analysis.SCOPES,
            Analysis.STAYS_ON_CPU,
        }
    )
    requires = ("assert",)
    name = "assert-on-tensor-in-forward"
    message = (
        "`assert {test}` turns a tensor into a Python bool: the host waits for the device on every {where}; "
        "check shapes only, or run the value check under a debug flag"
    )
    severity = Severity.WARNING
    category = "performance"
    summary = "assert on a tensor value in forward() or a training step: a device sync every call"
    what = (
        "Flags an `assert` whose condition is a tensor's values — `(a == b).all()`, `torch.isfinite(x).all()`, "
        "`x.max() <= 1`, `torch.allclose(a, b)` — in a module's `forward`, a function that runs `backward` once "
        "per call (a training step) or a loop each iteration of which runs `backward` (not an epoch loop "
        "around the step loop), outside test files. Checks of metadata (`x.shape == ...`, `x.dim()`, `x.dtype`) read "
        "no device memory and are left alone, as is a program that never names an accelerator."
    )
    why = (
        "`assert` calls `bool()` on the condition. For a tensor on the GPU that copies the result to the host "
        "and waits for every queued kernel: the CPU stops feeding the GPU on every forward pass. The check "
        "also vanishes under `python -O`, so it is no guard in production either."
    )
    opt_in = (
        "Measured on ten public training repositories it was not tuned on, it reported 2 asserts: one in a "
        "test script (test files are now skipped) and one a tutorial's deliberate check of an RNN fact — "
        "0 of 2 right, below the 80% a default warning needs. On 13 more (bench/realworld, unseen at "
        "2026-12-04) its one finding was wrong: a once-per-epoch check after the step loop, reported as every "
        "step (now silent). Select it where asserts in `forward` are meant to be debug-only."
    )
    example = """\
import torch
from torch import nn

class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(64, 10)

    def forward(self, x):
        logits = self.proj(x)
        assert torch.isfinite(logits).all()
        return logits
"""
    VALID = [
        # shapes are host metadata
        """\
from torch import nn
class Head(nn.Module):
    def forward(self, x):
        assert x.shape[-1] == 64, x.shape
        assert x.dim() == 2
        return x
""",
        # outside forward and any training step
        """\
import torch
def check(a, b):
    assert torch.allclose(a, b)
""",
        # a CPU-only program
        """\
import torch
from torch import nn
class Head(nn.Module):
    def forward(self, x):
        assert torch.isfinite(x).all()
        return x
model = Head()
for x in loader:
    model(x).sum().backward()
""",
        # unknown operands: not proven tensors
        """\
from torch import nn
class Head(nn.Module):
    def forward(self, x, mask):
        assert (mask == 1).all()
        return x
""",
    ]
    INVALID = [
        Invalid(
            """\
import torch
from torch import nn
class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 2)
    def forward(self, x):
        out = self.proj(x)
        assert (out >= 0).all(), "negative logits"
        return out
""",
            line=9,
        ),
        # a training step
        Invalid(
            """\
import torch
def train_step(model, x, y, optimizer):
    loss = torch.nn.functional.mse_loss(model(x), y)
    assert not torch.isnan(loss), "nan loss"
    loss.backward()
    optimizer.step()
""",
            line=4,
        ),
    ]

    def visit_Assert(self, node: cst.Assert) -> None:
        where = self._per_call()
        if where is None or self.ctx.stays_on_cpu or not self._tensor_valued(node.test):
            return
        code = self.ctx.module.code_for_node
        self.report(node, self.message.format(test=code(node.test), where=where))

    def _per_call(self) -> str | None:
        """What runs this assert again and again: a forward pass, a training step, or a loop iteration."""
        fn = self.ctx.current_function
        analysis = self.ctx.loop_analysis
        if is_test_file(self.ctx.path):
            return None  # a test asserts on values on purpose
        if any(_steps(analysis.events(loop)) for loop in self.ctx.loops):
            return "step"  # in a loop whose every iteration runs backward: not an epoch loop around one
        if fn is None:
            return None
        if fn.name.value == "forward" and self.ctx.in_module_class:
            return "forward pass"
        if _steps(analysis.body_events(fn)):
            return "step"  # one backward per call: a step function an outer loop calls
        return None

    def _tensor_valued(self, expr: cst.BaseExpression) -> bool:
        """Evidence that `expr` evaluates to a tensor's values (not its shape): a torch predicate, a
        comparison or reduction of a proven tensor."""
        if isinstance(expr, cst.UnaryOperation):
            return self._tensor_valued(expr.expression)
        if isinstance(expr, cst.BooleanOperation):
            return self._tensor_valued(expr.left) or self._tensor_valued(expr.right)
        if isinstance(expr, cst.Comparison):
            if any(isinstance(c.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)) for c in expr.comparisons):
                return False
            return any(self._tensor(e) for e in (expr.left, *(c.comparator for c in expr.comparisons)))
        return self._tensor(expr)

    def _tensor(self, expr: cst.BaseExpression) -> bool:
        """`expr` is a tensor holding values: a torch predicate, a reduction or comparison of one, or a
        value the shared analysis proves to be a tensor."""
        if isinstance(expr, cst.Attribute) and expr.attr.value in _METADATA_ATTRS:
            return False
        if isinstance(expr, cst.Call):
            func = expr.func
            q = self.ctx.qualname(func) or ""
            if q.startswith("torch.") and q[6:] in TENSOR_PREDICATES:
                return True
            if isinstance(func, cst.Attribute):
                if func.attr.value in _METADATA_METHODS:
                    return False
                if func.attr.value in _REDUCTIONS:
                    return self._tensor_valued(func.value)
        if isinstance(expr, (cst.Comparison, cst.UnaryOperation, cst.BooleanOperation)):
            return self._tensor_valued(expr)
        if isinstance(expr, cst.BinaryOperation):
            return self._tensor(expr.left) or self._tensor(expr.right)
        kind = self.ctx.kind(expr)
        return bool(kind & (Kind.TENSOR | Kind.LOSS)) and not kind & Kind.NUMBER
