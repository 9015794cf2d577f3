"""TL703 tensor-data-attribute: Tensor .data access outside torch.no_grad() initialisation"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.kinds import Kind
from torchlint.engine.names import dotted
from torchlint.engine.rule import SAFE, Invalid, Replace, Rule, fix
from torchlint.findings import Severity

_INIT_NAMES = ("init", "reset_parameters", "reset", "load", "copy", "ema", "update")


class TensorDataAttribute(Rule):
    code = "TL703"
    requires = ("data",)
    name = "tensor-data-attribute"
    message = "`{expr}.data` {how}: autograd cannot see the change or detect misuse{fix}"
    severity = Severity.WARNING
    summary = "Tensor .data access outside torch.no_grad() initialisation"
    what = (
        "Flags `.data` on tensors, parameters (`.weight`, `.bias`, loop variables over `.parameters()`) and "
        "`.grad` in code autograd sees — `forward`, training loops (loops that call `backward`), top-level "
        "script code — outside `torch.no_grad()` blocks and initialisation/EMA/copy helpers."
    )
    why = (
        "`.data` returns a tensor that shares storage but is detached from autograd's version counter. "
        "Writing through it changes values autograd saved for backward without raising (wrong gradients, "
        "silently); reading it gives a tensor whose later in-place modification corrupts the graph. "
        "`.detach()` is tracked, and writes belong under `with torch.no_grad():`."
    )
    example = "import torch\n\nlogits = torch.randn(4, 3)\nprobs = logits.data.softmax(-1)\n"
    fix_example = "import torch\n\nlogits = torch.randn(4, 3)\nprobs = logits.detach().softmax(-1)\n"
    fix_safety = (
        "Safe, for reads only: `x.data` becomes `x.detach()` (same values, no graph, version-tracked). "
        "Writes (`p.data = ...`, `p.data.mul_(...)`) are reported without a fix: move them under "
        "`torch.no_grad()`."
    )
    VALID = [
        """\
import torch
with torch.no_grad():
    for p in model.parameters():
        p.data.mul_(0.9)
""",
        """\
import torch
def init_weights(m):
    m.weight.data.normal_(0, 0.02)
""",
        "dataset = load()\nxs = dataset.data\n",
        # module surgery outside any graph
        "def fuse(conv, bn):\n    conv.weight.data = conv.weight.data * bn.weight.data\n",
        "import torch\ny = batch.data\n",
    ]
    INVALID = [
        Invalid(
            "import torch\nx = torch.ones(2)\ny = x.data.clone()\n",
            line=3,
            fixed="import torch\nx = torch.ones(2)\ny = x.detach().clone()\n",
        ),
        Invalid(
            """\
def train(model, loader):
    for x, y in loader:
        loss_fn(model(x), y).backward()
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-0.1)
            p.grad.zero_()
""",
            line=5,
        ),
        Invalid(
            """\
from torch import nn
class Clipped(nn.Module):
    def forward(self, x):
        self.fc.weight.data = self.fc.weight.data.clamp(-1, 1)
        return self.fc(x)
""",
            line=4,
        ),
    ]

    def visit_Module(self, node: cst.Module) -> None:
        self.writes: set[int] = set()
        self.params: set[str] = set()
        self.assigned: list[cst.BaseExpression] = []

    def visit_For(self, node: cst.For) -> None:
        it = node.iter
        while isinstance(it, cst.Call) and dotted(it.func) in ("enumerate", "zip", "list") and it.args:
            it = it.args[0].value
        if (
            isinstance(it, cst.Call)
            and isinstance(it.func, cst.Attribute)
            and it.func.attr.value in ("parameters", "named_parameters", "buffers", "named_buffers")
        ):
            for n in (node.target, *_names_in(node.target)):
                if isinstance(n, cst.Name):
                    self.params.add(n.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self.writes.add(id(t.target))
        # `w.data = w.data.clamp(...)`: one finding (the write), not a second for the read
        self.assigned = [t.target for t in node.targets]

    def leave_Assign(self, node: cst.Assign) -> None:
        self.assigned = []

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.writes.add(id(node.target))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value.endswith("_") and not func.attr.value.startswith("_"):
            self.writes.add(id(func.value))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value != "data":
            return
        recv = node.value
        if not self._is_tensor(recv) or self._exempt():
            return
        expr = self.ctx.module.code_for_node(recv)
        if id(node) not in self.writes and any(
            self.ctx.module.code_for_node(t) == f"{expr}.data" for t in self.assigned
        ):
            return
        if id(node) in self.writes:
            self.report(node, self.message.format(expr=expr, how="is written outside `torch.no_grad()`", fix=""))
        else:
            self.report(
                node,
                self.message.format(expr=expr, how="bypasses autograd", fix=f"; use `{expr}.detach()`"),
                fix=fix("Use `.detach()`", Replace(node, f"{expr}.detach()"), applicability=SAFE),
            )

    def _is_tensor(self, recv: cst.BaseExpression) -> bool:
        if isinstance(recv, cst.Attribute) and recv.attr.value in ("weight", "bias", "grad"):
            return True
        if isinstance(recv, cst.Name) and recv.value in self.params:
            return True
        fn = self.ctx.current_function
        if isinstance(recv, cst.Name) and fn is not None and fn.name.value == "forward" and self.ctx.in_module_class:
            if recv.value in {p.name.value for p in fn.params.params[1:]}:
                return True  # forward's inputs are tensors
        return bool(self.ctx.kind(recv) & (Kind.TENSOR | Kind.LOSS)) and not self.ctx.kind(recv) & Kind.BATCH

    def _exempt(self) -> bool:
        """Only computation autograd may see: `forward`, training loops, top-level script code.

        Module surgery in library helpers (fusing, re-parameterising, copying weights) runs outside
        any graph and is not flagged.
        """
        if self.ctx.under_call("torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad"):
            return True
        if any(any(k in fn.name.value.lower() for k in _INIT_NAMES) for fn in self.ctx.functions):
            return True
        fn = self.ctx.current_function
        if fn is None or fn.name.value in ("forward", "training_step"):
            return False
        loops = self.ctx.loop_analysis
        return not any(loops.is_training_loop(loop) for loop in self.ctx.loops)


def _names_in(target: cst.BaseExpression):
    if isinstance(target, (cst.Tuple, cst.List)):
        for el in target.elements:
            yield el.value
            yield from _names_in(el.value)
