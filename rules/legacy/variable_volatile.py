"""TL709 variable-volatile: `Variable(x, volatile=True)` / `.volatile`, ignored since PyTorch 0.4"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.core.callargs import get_arg, truthy
from torchlint.engine.flow.graph_flow import body_of
from torchlint.engine.rule import Invalid, Rule
from torchlint.engine.semantic.kinds import Kind
from torchlint.findings import Severity

VARIABLE = "torch.autograd.Variable"


class VariableVolatile(Rule):
    code = "TL709"
    analyses = frozenset(
        {Analysis.CALL_SITES, Analysis.GRAPH_BODIES, Analysis.KINDS, Analysis.OWN_SUMMARY, Analysis.SCOPES}
    )
    requires = ("volatile",)
    name = "variable-volatile"
    message = (
        "{what} has had no effect since PyTorch 0.4 (ignored with a warning): it does not stop autograd from "
        "recording; to run without a graph, use `with torch.no_grad():`"
    )
    severity = Severity.WARNING
    category = "resource"
    summary = "`Variable(x, volatile=True)` / `.volatile`: ignored since 0.4, it stops no graph"
    what = (
        "Flags `torch.autograd.Variable(x, volatile=...)` (the name resolved through the imports) and the "
        "`.volatile` attribute — set or read — on a value proven a tensor: a `Variable(...)` or a tensor by "
        "the engine's evidence. No automatic fix: what must move under `torch.no_grad()` is the code that "
        "*uses* the value (the forward pass of an evaluation loop), a structural change only you can place."
    )
    why = (
        "PyTorch 0.3 code marked inference inputs `volatile=True` so no graph was recorded. Since 0.4 the "
        "argument and the attribute are ignored (a warning says so; reading `.volatile` is always False): "
        "every forward pass on such inputs records a graph and keeps its activations, the memory and time "
        "`volatile` was meant to save. `torch.no_grad()` (or `torch.inference_mode()`) is the replacement."
    )
    example = """\
from torch.autograd import Variable

for images, labels in test_loader:
    images = Variable(images, volatile=True)
    outputs = model(images)
"""
    VALID = [
        "import torch\nwith torch.no_grad():\n    outputs = model(images)\n",
        "from torch.autograd import Variable\nx = Variable(t, volatile=False)\n",
        # not torch's Variable
        "class Variable:\n    def __init__(self, x, volatile=False):\n        self.volatile = volatile\n"
        "v = Variable(1, volatile=True)\n",
        # an attribute of something not proven a tensor
        "config.volatile = True\nif state.volatile:\n    pass\n",
    ]
    INVALID = [
        Invalid("from torch.autograd import Variable\nx = Variable(images, volatile=True)\n", line=2),
        Invalid("import torch\nx = torch.autograd.Variable(t, volatile=is_eval)\n", line=2),
        Invalid(
            "from torch.autograd import Variable\nh = Variable(torch.zeros(2, 8))\nh.volatile = True\n",
            line=3,
        ),
        Invalid("import torch\nx = torch.randn(3)\nif not x.volatile:\n    print('graph')\n", line=3),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.qualname(node.func) != VARIABLE:
            return
        volatile = get_arg(node, "volatile")
        if truthy(volatile):
            self.report(node, self.message.format(what="`volatile=` in `Variable(...)`"))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value == "volatile" and self._is_tensor(node.value):
            self.report(node, self.message.format(what="`.volatile`"))

    def _is_tensor(self, expr: cst.BaseExpression) -> bool:
        if self.ctx.kind(expr) & (Kind.TENSOR | Kind.LOSS):
            return True
        if not isinstance(expr, cst.Name):
            return False
        body = body_of(self.ctx)
        at = body.index(expr)
        d = body.reaching(expr.value, at) if at is not None else None
        return d is not None and isinstance(d.value, cst.Call) and self.ctx.qualname(d.value.func) == VARIABLE
