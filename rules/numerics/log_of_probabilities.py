"""TL808 log-of-probabilities: the log of a sigmoid or softmax taken in two steps instead of logsigmoid / log_softmax"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.rule import SAFE, Invalid, Replace, Rule, fix
from torchlint.engine.torch.activations import FUNCTIONS
from torchlint.findings import Severity

from ._helpers import activation_input, dim_only, torch_call

_FUSED = {"sigmoid": "logsigmoid", "softmax": "log_softmax"}


class LogOfProbabilities(Rule):
    code = "TL808"
    requires = ("log",)
    name = "log-of-probabilities"
    message = (
        "the log of a {activation} taken in two steps is -inf (and its gradient NaN) once the {activation} "
        "rounds to 0 for large logits; use `{fused}`"
    )
    severity = Severity.WARNING
    category = "correctness"
    opt_in = (
        "Measured on 25 public repositories it was not tuned on (bench/realworld, unseen at 2026-12-03 and "
        "2026-12-04), 0 of its 4 findings were right (4 debatable): word2vec negative sampling, whose "
        "embedding dot products never reach the range where a float32 sigmoid underflows before the log. "
        "Select it for logits that can grow large (confident classifiers, mixed precision)."
    )
    summary = "log(sigmoid(x)) / log(softmax(x)) instead of logsigmoid / log_softmax"
    what = (
        "Flags the log of a sigmoid or softmax output computed in two steps, with the activation applied in "
        "the log's own argument: `torch.log(torch.sigmoid(x))`, `x.sigmoid().log()`, "
        "`torch.log(F.softmax(x, dim=1))`, `F.softmax(x, 1).log()` (the activation proven by its call: "
        "`torch.sigmoid`, `F.sigmoid`, `torch.special.expit`, `torch.softmax`, `F.softmax`, or the tensor "
        "methods). A log of a stored probability (`torch.log(p + eps)`) is not flagged."
    )
    why = (
        "In float32 `sigmoid(-104)` and `softmax([0, 200])[0]` round to exactly 0, so their log is -inf and "
        "the backward pass produces NaN that spreads to every weight (in float16 it happens at logits of "
        "about 17). `F.logsigmoid` and `F.log_softmax` compute the same value with the log-sum-exp trick: "
        "`logsigmoid(-200)` is -200, not -inf."
    )
    example = """\
import torch
import torch.nn.functional as F

log_p = torch.log(F.softmax(logits, dim=-1))
"""
    fix_example = """\
import torch
import torch.nn.functional as F

log_p = F.log_softmax(logits, dim=-1)
"""
    fix_safety = (
        "Safe: the same function, computed without the intermediate rounding (equal wherever the two-step "
        "form is finite). `softmax` keeps its spelling and arguments (`F.softmax(x, 1)` -> `F.log_softmax(x, "
        "1)`, `x.softmax(-1)` -> `x.log_softmax(-1)`); `sigmoid` becomes `torch.nn.functional.logsigmoid(x)`. "
        "No fix when the activation is a bare imported name (`from torch import sigmoid`)."
    )
    VALID = [
        "import torch.nn.functional as F\nlog_p = F.log_softmax(logits, dim=-1)\n",
        "import torch.nn.functional as F\nlog_q = F.logsigmoid(scores)\n",
        # a stored probability, clamped by its author: not the two-step form
        "import torch\np = torch.sigmoid(z)\nlog_p = torch.log(p + 1e-8)\n",
        "import math\ny = math.log(sigmoid(x))\n",
        "import torch\ny = torch.log(x.softmax)\n",
    ]
    INVALID = [
        Invalid(
            "import torch\nimport torch.nn.functional as F\ny = torch.log(F.softmax(x, dim=1))\n",
            line=3,
            fixed="import torch\nimport torch.nn.functional as F\ny = F.log_softmax(x, dim=1)\n",
        ),
        Invalid(
            "import torch\ny = torch.log(torch.sigmoid(z))\n",
            line=2,
            fixed="import torch\ny = torch.nn.functional.logsigmoid(z)\n",
        ),
        Invalid(
            "import torch\ny = (a + b).sigmoid().log()\n",
            line=2,
            fixed="import torch\ny = torch.nn.functional.logsigmoid((a + b))\n",
        ),
        Invalid(
            "import torch\ny = logits.softmax(-1).log()\n", line=2, fixed="import torch\ny = logits.log_softmax(-1)\n"
        ),
        Invalid("from torch import log, sigmoid\ny = log(sigmoid(z))\n", line=2),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        inner = self._logged(node)
        if inner is None:
            return
        activation = self._activation(inner)
        if activation is None:
            return
        fused = _FUSED[activation]
        new = self._fused(inner, activation)
        edit = fix(f"Use `{fused}`", Replace(node, new), applicability=SAFE) if new is not None else None
        self.report(node, self.message.format(activation=activation, fused=fused), fix=edit)

    def _logged(self, node: cst.Call) -> cst.Call | None:
        """The call `node` takes the log of: `torch.log(inner)` or `inner.log()`."""
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "log" and not node.args:
            inner: cst.BaseExpression = func.value
        elif torch_call(self.ctx, node, "log"):
            inner = node.args[0].value
        else:
            return None
        return inner if isinstance(inner, cst.Call) else None

    def _activation(self, call: cst.Call) -> str | None:
        """ "sigmoid" / "softmax" when a torch function or the tensor method proves `call` applies it."""
        found = FUNCTIONS.get(self.ctx.qualname(call.func) or "")
        if found in _FUSED:
            return found
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in _FUSED and self.ctx.qualname(func) is None:
            return func.attr.value if dim_only(call) else None
        return None

    def _fused(self, call: cst.Call, activation: str) -> cst.BaseExpression | str | None:
        func = call.func
        if not isinstance(func, cst.Attribute):
            return None
        if activation == "softmax":
            return call.with_changes(func=func.with_changes(attr=cst.Name("log_softmax")))
        torch = self.ctx.imports.local_name("torch")
        inner = activation_input(call)
        if torch is None or inner is None:
            return None
        return f"{torch}.nn.functional.logsigmoid({cst.Module([]).code_for_node(inner)})"
