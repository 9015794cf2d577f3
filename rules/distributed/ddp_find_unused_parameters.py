"""TL405 ddp-find-unused-parameters: DDP find_unused_parameters=True costs a graph traversal per step"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.callargs import get_arg, is_name, string_value
from torchlint.engine.rule import Invalid, Rule
from torchlint.findings import Severity

from ._helpers import DDP


class DdpFindUnusedParameters(Rule):
    code = "TL405"
    requires = ("find_unused_parameters",)
    name = "ddp-find-unused-parameters"
    message = (
        "`find_unused_parameters=True` makes DDP traverse the autograd graph after every forward pass; "
        "keep it only if some parameters really get no gradient (otherwise drop it, or use `static_graph=True`)"
    )
    severity = Severity.INFO
    category = "performance"
    opt_in = (
        "Measured on nine public repositories it was not tuned on, 29 of its 30 findings were debatable: the "
        "projects set `find_unused_parameters=True` on purpose, for models with optional branches that DDP "
        "would otherwise reject with an error. True, but rarely worth changing; select it when tuning a job."
    )
    summary = "DDP find_unused_parameters=True costs a graph traversal per step"
    what = (
        "Flags `find_unused_parameters=True` given to `DistributedDataParallel`, Accelerate's "
        "`DistributedDataParallelKwargs` or Lightning's `DDPStrategy` (and the `ddp_find_unused_parameters_true` strategy)."
    )
    why = (
        "With the flag, DDP walks the autograd graph from the outputs after each forward pass to find "
        "parameters that will not receive gradients, and cannot overlap communication as well. It is often "
        "copied from examples 'to make an error go away' and then costs throughput for the whole run."
    )
    example = """\
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(model, device_ids=[rank], find_unused_parameters=True)
"""
    VALID = [
        "from torch.nn.parallel import DistributedDataParallel as DDP\nmodel = DDP(model, device_ids=[rank])\n",
        "from torch.nn.parallel import DistributedDataParallel as DDP\nmodel = DDP(model, find_unused_parameters=False)\n",
        "find_unused_parameters = True\n",
    ]
    INVALID = [
        Invalid(
            "from accelerate import DistributedDataParallelKwargs\n"
            "kwargs = DistributedDataParallelKwargs(find_unused_parameters=True)\n",
            line=2,
        ),
        Invalid('import lightning as L\ntrainer = L.Trainer(strategy="ddp_find_unused_parameters_true")\n', line=2),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        q = self.ctx.qualname(node.func) or ""
        last = q.rpartition(".")[2]
        if q == DDP or last in ("DistributedDataParallelKwargs", "DDPStrategy"):
            arg = get_arg(node, "find_unused_parameters")
            if arg is not None and is_name(arg.value, "True"):
                self.report(arg)
        elif last == "Trainer":
            arg = get_arg(node, "strategy")
            if arg is not None and string_value(arg.value) == "ddp_find_unused_parameters_true":
                self.report(arg)
