"""TL407 wrapped-state-dict-saved: state_dict() of a DataParallel/DDP wrapper is saved"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.graph_flow import body_of
from torchlint.engine.kinds import Kind
from torchlint.engine.names import dotted
from torchlint.engine.rule import DISPLAY, Invalid, Replace, Rule, fix
from torchlint.findings import Severity


class WrappedStateDictSaved(Rule):
    code = "TL407"
    requires = ("state_dict",)
    name = "wrapped-state-dict-saved"
    message = (
        "`{model}` is wrapped in (Distributed)DataParallel: its `state_dict()` keys all start with `module.`, "
        "so the checkpoint does not load into the bare model; save `{model}.module.state_dict()`"
    )
    severity = Severity.WARNING
    category = "correctness"
    opt_in = (
        "On 12 public repositories it was not tuned on (bench/realworld, unseen at 2026-12-03), none of its 11 "
        "findings was right: 8 were checkpoints the project loads back into the same wrapper or through a loader "
        "that strips `module.` (a convention, not a bug), 3 were wrong (a model wrapped only on some paths, a "
        "state dict handed to a check that expects the prefix). It does not read the project's loaders yet."
    )
    summary = "state_dict() of a DataParallel/DDP wrapper is saved"
    what = "Flags `state_dict()` of a `DataParallel`/`DistributedDataParallel` wrapper in a program that saves checkpoints."
    why = (
        "The wrapper registers the real model as its submodule `module`, so every key gains a `module.` "
        "prefix. Loading that checkpoint into an unwrapped model (for inference, or a run with a different "
        "number of GPUs) fails with hundreds of missing and unexpected keys."
    )
    example = """\
import torch

model = torch.nn.parallel.DistributedDataParallel(net, device_ids=[rank])
torch.save(model.state_dict(), "checkpoint.pt")
"""
    fix_example = """\
import torch

model = torch.nn.parallel.DistributedDataParallel(net, device_ids=[rank])
torch.save(model.module.state_dict(), "checkpoint.pt")
"""
    fix_safety = (
        "Display only (shown, never applied by `--fix`, even with `--unsafe-fixes`): it changes the checkpoint's "
        "keys (no `module.` prefix). Right for consumers that load into the bare model, but code that loads the "
        "file back into a wrapped model must then load into `model.module`, and `model.module` raises where the "
        "model is only sometimes wrapped; torchlint adapts neither for you."
    )
    VALID = [
        """\
import torch
model = torch.nn.parallel.DistributedDataParallel(net, device_ids=[rank])
torch.save(model.module.state_dict(), "ckpt.pt")
""",
        """\
import torch
model = Net()
torch.save({"model": model.state_dict()}, "ckpt.pt")
""",
        """\
import torch
model = Net()
shapes = {k: v.shape for k, v in model.state_dict().items()}
model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank])
torch.save(model.module.state_dict(), "ckpt.pt")
""",
    ]
    INVALID = [
        Invalid(
            """\
import torch
from torch import nn
model = nn.DataParallel(Net())
torch.save({"epoch": 3, "model": model.state_dict()}, "ckpt.pt")
""",
            line=4,
            fixed="""\
import torch
from torch import nn
model = nn.DataParallel(Net())
torch.save({"epoch": 3, "model": model.module.state_dict()}, "ckpt.pt")
""",
        ),
        Invalid(
            "import torch\ndef save(ddp_model: torch.nn.parallel.DistributedDataParallel, path):\n    torch.save(ddp_model.state_dict(), path)\n",
            line=3,
            fixed="""\
import torch
def save(ddp_model: torch.nn.parallel.DistributedDataParallel, path):
    torch.save(ddp_model.module.state_dict(), path)
""",
        ),
    ]

    def visit_Module(self, node: cst.Module) -> None:
        self.active = "save" in self.ctx.text

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not self.active or not isinstance(func, cst.Attribute) or func.attr.value != "state_dict":
            return
        recv = func.value
        name = dotted(recv)
        if not name:
            return
        if self.ctx.kind(recv) & Kind.WRAPPED and not self._unwrapped_here(recv, name):
            self.report(
                node,
                self.message.format(model=name),
                fix=fix(f"Save `{name}.module.state_dict()`", Replace(recv, f"{name}.module"), applicability=DISPLAY),
            )

    def _unwrapped_here(self, recv: cst.BaseExpression, name: str) -> bool:
        """The assignment that reaches this call binds a value that is not a wrapper (the model is wrapped
        only further down: `sd = model.state_dict()` before `model = DDP(model)`)."""
        body = body_of(self.ctx)
        index = body.index(recv)
        d = body.reaching(name, index) if index is not None else None
        return d is not None and d.value is not None and not self.ctx.kind(d.value) & Kind.WRAPPED
