"""TL702 autograd-variable: torch.autograd.Variable(...)"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.call_binding import bind, signature
from torchlint.engine.core.callargs import get_arg, is_name
from torchlint.engine.rule import UNSAFE, Invalid, Replace, Rule, fix
from torchlint.findings import Severity

from ._signatures import TORCH

_RISK = "gradients may now flow into the wrapped tensor"


class AutogradVariable(Rule):
    code = "TL702"
    requires = ("Variable",)
    name = "autograd-variable"
    message = "`torch.autograd.Variable` has been a no-op wrapper since PyTorch 0.4: use the tensor itself{hint}"
    severity = Severity.WARNING
    category = "modernisation"
    summary = "torch.autograd.Variable(...)"
    what = "Flags calls to `torch.autograd.Variable`."
    why = (
        "Since 0.4 tensors carry autograd state themselves and `Variable(t)` just returns a tensor. The "
        "wrapper suggests semantics it no longer has — `volatile=True` is ignored (use `torch.no_grad()`), "
        "so code relying on it silently builds graphs and wastes memory."
    )
    example = "import torch\nfrom torch.autograd import Variable\n\nx = Variable(torch.randn(3))\n"
    fix_example = "import torch\nfrom torch.autograd import Variable\n\nx = torch.randn(3)\n"
    fix_safety = (
        "Unsafe: `Variable(t)` becomes `t`, but `Variable(t)` returned a detached copy, so a `t` that "
        "carries a graph now passes gradients through; `Variable(t, requires_grad=True)` becomes "
        "`t.requires_grad_()`, which marks `t` itself (the usual intent) instead of a new leaf, and "
        "raises on a non-leaf `t`. Calls with `volatile=` are left to you, and so are calls whose arguments "
        "do not bind for certain to `Variable(data, requires_grad, volatile, ...)` (`*args`, `**kwargs`)."
    )
    VALID = [
        "import torch\nx = torch.randn(3, requires_grad=True)\n",
        "class Variable:\n    pass\nv = Variable()\n",
    ]
    INVALID = [
        Invalid(
            "import torch\nx = torch.autograd.Variable(t, requires_grad=True)\n",
            line=2,
            fixed="import torch\nx = t.requires_grad_()\n",
        ),
        Invalid("from torch.autograd import Variable\nx = Variable(t, volatile=True)\n", line=2),
        Invalid(  # `volatile` by position: bound to its name, no fix
            "from torch.autograd import Variable\nx = Variable(t, False, True)\n",
            line=2,
            message="`torch.autograd.Variable` has been a no-op wrapper since PyTorch 0.4: use the tensor itself "
            "(`volatile=True` is ignored: wrap the code in `with torch.no_grad():`)",
        ),
        Invalid(
            "from torch.autograd import Variable\nx = Variable(data=t, requires_grad=True)\n",
            line=2,
            fixed="from torch.autograd import Variable\nx = t.requires_grad_()\n",
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.qualname(node.func) != "torch.autograd.Variable":
            return
        bound = bind(node, signature(TORCH["torch.autograd.Variable"]))
        data, grad = (bound.get("data"), bound.get("requires_grad")) if bound is not None else (None, None)
        edit = None
        if bound is not None and data is not None and set(bound) <= {"data", "requires_grad"}:
            code = self.ctx.module.code_for_node(data.value)
            if not isinstance(data.value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
                code = f"({code})"
            if grad is None or is_name(grad.value, "False"):
                edit = fix("Drop the wrapper", Replace(node, code), applicability=UNSAFE, risk=_RISK)
            elif is_name(grad.value, "True"):
                edit = fix(
                    "Use `.requires_grad_()`",
                    Replace(node, f"{code}.requires_grad_()"),
                    applicability=UNSAFE,
                    risk=_RISK,
                )
        volatile = bound.get("volatile") if bound is not None else get_arg(node, "volatile")
        hint = " (`volatile=True` is ignored: wrap the code in `with torch.no_grad():`)" if volatile else ""
        self.report(node, self.message.format(hint=hint), fix=edit)
