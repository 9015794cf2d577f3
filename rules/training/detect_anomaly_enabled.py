"""TL113 detect-anomaly-enabled: torch.autograd anomaly detection left enabled outside tests"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.core.walk import iter_nodes
from torchlint.engine.rule import SAFE, Invalid, RemoveStatement, Rule, fix
from torchlint.findings import Severity

from ._helpers import is_test_file


class DetectAnomalyEnabled(Rule):
    code = "TL113"
    analyses = frozenset({Analysis.CALL_SITES, Analysis.LOCAL_FUNCTIONS})
    requires = ("anomaly",)
    name = "detect-anomaly-enabled"
    message = "autograd anomaly detection is switched on: every backward pass records stack traces and checks for NaN, several times slower"
    severity = Severity.WARNING
    category = "performance"
    summary = "torch.autograd anomaly detection left enabled outside tests"
    what = (
        "Flags `torch.autograd.set_detect_anomaly(True)` and `torch.autograd.detect_anomaly()` in code "
        "that is not a test file, unless it is behind an `if` (a debug switch) or inside a function "
        "named as a debugging or checking tool (`debug_step`, `check_gradients`)."
    )
    why = (
        "Anomaly mode records a Python stack trace for every operation in the forward pass and checks "
        "every gradient for NaN in the backward pass. It is a debugging tool: left on, training runs "
        "several times slower and uses more host memory, with no change in the results."
    )
    example = """\
import torch

torch.autograd.set_detect_anomaly(True)
train(model, loader)
"""
    fix_example = """\
import torch

train(model, loader)
"""
    fix_safety = "Removes the statement. Safe: anomaly mode never changes results, only diagnostics."
    VALID = [
        """\
import torch
if args.debug:
    torch.autograd.set_detect_anomaly(True)
""",
        """\
import torch
torch.autograd.set_detect_anomaly(False)
""",
        """\
import torch
torch.autograd.set_detect_anomaly(args.detect_anomaly)
""",
    ]
    INVALID = [
        Invalid(
            """\
import torch
torch.autograd.set_detect_anomaly(True)
main()
""",
            line=2,
            fixed="""\
import torch
main()
""",
        ),
        Invalid(
            """\
from torch import autograd

def train_step(model, x):
    with autograd.detect_anomaly():
        model(x).sum().backward()
""",
            line=4,
        ),
    ]

    _SET = ("torch.autograd.set_detect_anomaly", "torch.autograd.anomaly_mode.set_detect_anomaly")
    _CTX = ("torch.autograd.detect_anomaly", "torch.autograd.anomaly_mode.detect_anomaly")

    def visit_Call(self, node: cst.Call) -> None:
        q = self.ctx.qualname(node.func)
        if q not in self._SET and q not in self._CTX:
            return
        if self.ctx.under_condition or is_test_file(self.ctx.path):
            return
        if q in self._SET:
            arg = node.args[0] if node.args else None
            if arg is None or not (isinstance(arg.value, cst.Name) and arg.value.value == "True"):
                return
        block_of = next((w for w in reversed(self.ctx.withs) if any(i.item is node for i in w.items)), None)
        if block_of is not None and not self._runs_backward(block_of.body):
            return  # anomaly mode instruments backward passes only: a forward-only block costs nothing
        edit = None
        line = self.ctx.statement
        block = self.ctx.block
        if (
            q in self._SET
            and line is not None
            and len(line.body) == 1
            and isinstance(line.body[0], cst.Expr)
            and line.body[0].value is node
            and len(block) > 1
            and line in block
        ):
            edit = fix("Remove the call", RemoveStatement(line), applicability=SAFE)
        self.report(node, fix=edit)

    def _runs_backward(self, body: cst.BaseSuite) -> bool:
        """The block, or a function of this file it calls, runs a backward pass."""
        local = self.ctx.local_functions()
        for n in iter_nodes(body):
            if not isinstance(n, cst.Call):
                continue
            if isinstance(n.func, cst.Attribute) and n.func.attr.value in ("backward", "manual_backward"):
                return True
            if isinstance(n.func, cst.Name) and n.func.value in local:
                inner = local[n.func.value]
                if any(
                    isinstance(c, cst.Call) and isinstance(c.func, cst.Attribute) and c.func.attr.value == "backward"
                    for c in iter_nodes(inner)
                ):
                    return True
        return False
