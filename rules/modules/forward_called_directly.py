"""TL203 forward-called-directly: model.forward(x) instead of model(x)"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.kinds import Kind
from torchlint.engine.rule import SAFE, Invalid, Replace, Rule, fix
from torchlint.findings import Severity


class ForwardCalledDirectly(Rule):
    code = "TL203"
    requires = ("forward",)
    name = "forward-called-directly"
    message = "`{recv}.forward(...)` skips the module's hooks (and `torch.compile`/FSDP wrappers); call `{recv}(...)`"
    severity = Severity.WARNING
    summary = "model.forward(x) instead of model(x)"
    what = "Flags `m.forward(...)` where `m` is an `nn.Module` instance (not `super().forward(...)`)."
    why = (
        "`Module.__call__` runs forward pre-hooks and hooks, which is how DDP synchronises, how FSDP "
        "gathers parameters, how quantization observers and many profilers work. Calling `.forward` "
        "directly silently bypasses all of them."
    )
    example = "import torch\n\nmodel = torch.nn.Linear(4, 2)\ny = model.forward(x)\n"
    fix_example = "import torch\n\nmodel = torch.nn.Linear(4, 2)\ny = model(x)\n"
    fix_safety = "Safe: `model(x)` calls `forward` with the same arguments, plus the registered hooks."
    VALID = [
        """\
from torch import nn
class M(nn.Linear):
    def forward(self, x):
        return super().forward(x) * 2
""",
        """\
from torch import nn
class M(nn.Linear):
    def forward(self, x):
        return nn.Linear.forward(self, x)
""",
        "y = model(x)\n",
        "result = graph.forward(x)\n",
        """\
import torch
from torch import nn
class XIELU(nn.Module):
    def __init__(self):
        super().__init__()
        self._cuda_obj = torch.classes.xielu.XIELU()
    def forward(self, x):
        return self._cuda_obj.forward(x)
""",
    ]
    INVALID = [
        Invalid(
            "from torch import nn\nnet = nn.Sequential(nn.Linear(2, 2))\nout = net.forward(inputs, )\n",
            line=3,
            fixed="from torch import nn\nnet = nn.Sequential(nn.Linear(2, 2))\nout = net(inputs, )\n",
        ),
        Invalid(
            """\
from torch import nn
class Wrapper(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(4, 4)
    def forward(self, x):
        return self.encoder.forward(x)
""",
            line=7,
            fixed="""\
from torch import nn
class Wrapper(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(4, 4)
    def forward(self, x):
        return self.encoder(x)
""",
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value != "forward":
            return
        recv = func.value
        if isinstance(recv, cst.Call) or (isinstance(recv, cst.Name) and recv.value == "self"):
            return  # super().forward(...), self.forward(...)
        if self.ctx.qualname(recv) is not None or (
            isinstance(recv, cst.Name) and recv.value in self.ctx.semantics.classes.by_name
        ):
            return  # nn.Linear.forward(self, x): an explicit base-class call
        if not self.ctx.kind(recv) & Kind.MODEL:
            return  # e.g. a compiled extension object with its own `forward`
        text = self.ctx.module.code_for_node(recv)
        self.report(
            node,
            self.message.format(recv=text),
            fix=fix(f"Call `{text}(...)`", Replace(func, recv), applicability=SAFE),
        )
