"""TL407 wrapped-state-dict-saved: state_dict() of a DataParallel/DDP wrapper is saved"""

from __future__ import annotations

from pathlib import Path

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.flow.graph_flow import body_of
from torchlint.engine.rule import DISPLAY, Invalid, Replace, Rule, fix
from torchlint.engine.semantic.kinds import Kind
from torchlint.engine.semantic.names import dotted
from torchlint.engine.torch.checkpoint_consumers import Verdict
from torchlint.findings import Severity


class WrappedStateDictSaved(Rule):
    code = "TL407"
    analyses = frozenset(
        {
            Analysis.CALLING_CONTEXTS,
            Analysis.CALL_SITES,
            Analysis.CHECKPOINT_CONSUMERS,
            Analysis.GRAPH_BODIES,
            Analysis.KINDS,
            Analysis.OWN_SUMMARY,
            Analysis.SCOPES,
            Analysis.VALUES,
        }
    )
    requires = ("state_dict",)
    name = "wrapped-state-dict-saved"
    message = (
        "`{model}` is wrapped in (Distributed)DataParallel: its `state_dict()` keys all start with `module.`, "
        "and the project's loader of this checkpoint ({loader}) loads it into the bare model; save "
        "`{model}.module.state_dict()`"
    )
    severity = Severity.WARNING
    category = "correctness"
    opt_in = (
        "On 12 public repositories it was not tuned on (bench/realworld, unseen at 2026-12-03), none of its 11 "
        "findings was right: 8 were checkpoints the project loads back into the same wrapper or through a loader "
        "that strips `module.` (a convention, not a bug), 3 were wrong (a model wrapped only on some paths, a "
        "state dict handed to a check that expects the prefix). It now reads the project's loaders (issue 26) and "
        "reports only when every loader found takes the bare model; not measured on unseen code since."
    )
    summary = "state_dict() of a DataParallel/DDP wrapper is saved"
    what = (
        "Flags `state_dict()` of a `DataParallel`/`DistributedDataParallel` wrapper that reaches `torch.save` "
        "(directly, in a dict, through a name or a project save helper) when the project's loaders of that "
        "checkpoint (a `load_state_dict` whose function names the save's key or file name, in any project "
        "file) all load it into a bare model without stripping `module.`. Silent when no loader is found, or "
        "one loads into a wrapper, strips the prefix, or loads into something not proven a model."
    )
    why = (
        "The wrapper registers the real model as its submodule `module`, so every key gains a `module.` "
        "prefix. Loading that checkpoint into an unwrapped model (for inference, or a run with a different "
        "number of GPUs) fails with hundreds of missing and unexpected keys."
    )
    example = """\
import torch

model = torch.nn.parallel.DistributedDataParallel(net, device_ids=[rank])
torch.save(model.state_dict(), "checkpoint.pt")

bare = torch.nn.Linear(8, 2)
bare.load_state_dict(torch.load("checkpoint.pt"))
"""
    fix_example = """\
import torch

model = torch.nn.parallel.DistributedDataParallel(net, device_ids=[rank])
torch.save(model.module.state_dict(), "checkpoint.pt")

bare = torch.nn.Linear(8, 2)
bare.load_state_dict(torch.load("checkpoint.pt"))
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
        # the loader strips the prefix
        """\
import torch
model = torch.nn.DataParallel(torch.nn.Linear(4, 2))
torch.save({"model": model.state_dict()}, "ckpt.pt")
def load(net):
    sd = torch.load("ckpt.pt")["model"]
    net.load_state_dict({k.replace("module.", ""): v for k, v in sd.items()})
""",
        # loaded back into the same wrapper
        """\
import torch
model = torch.nn.DataParallel(torch.nn.Linear(4, 2))
torch.save({"model": model.state_dict()}, "ckpt.pt")
model.load_state_dict(torch.load("ckpt.pt")["model"])
""",
        # not a checkpoint: a check that expects the prefix
        """\
import torch
model = torch.nn.DataParallel(torch.nn.Linear(4, 2))
sanity_check(model.state_dict(), "ckpt.pt")
net = torch.nn.Linear(4, 2)
net.load_state_dict(torch.load("ckpt.pt"))
""",
    ]
    INVALID = [
        Invalid(
            """\
import torch
from torch import nn
model = nn.DataParallel(nn.Linear(4, 2))
torch.save({"epoch": 3, "model": model.state_dict()}, "ckpt.pt")
net = nn.Linear(4, 2)
net.load_state_dict(torch.load("ckpt.pt")["model"])
""",
            line=4,
            fixed="""\
import torch
from torch import nn
model = nn.DataParallel(nn.Linear(4, 2))
torch.save({"epoch": 3, "model": model.module.state_dict()}, "ckpt.pt")
net = nn.Linear(4, 2)
net.load_state_dict(torch.load("ckpt.pt")["model"])
""",
        ),
        Invalid(
            """\
import torch
def save(ddp_model: torch.nn.parallel.DistributedDataParallel):
    torch.save(ddp_model.state_dict(), "last.pt")
def load():
    model = torch.nn.Linear(4, 2)
    model.load_state_dict(torch.load("last.pt"))
""",
            line=3,
            fixed="""\
import torch
def save(ddp_model: torch.nn.parallel.DistributedDataParallel):
    torch.save(ddp_model.module.state_dict(), "last.pt")
def load():
    model = torch.nn.Linear(4, 2)
    model.load_state_dict(torch.load("last.pt"))
""",
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value != "state_dict":
            return
        recv = func.value
        name = dotted(recv)
        if not name or not self.ctx.kind(recv) & Kind.WRAPPED or self._unwrapped_here(recv, name):
            return
        consumers = self.ctx.checkpoint_consumers
        save = consumers.saved(node, self.ctx.current_function)
        loaders = consumers.loaders(save) if save is not None else None
        if not loaders or any(lo.verdict is not Verdict.INCOMPATIBLE for lo in loaders):
            return  # not a checkpoint, no loader found, or one that takes `module.` keys (or may)
        self.report(
            node,
            self.message.format(model=name, loader=Path(loaders[0].path).name),
            fix=fix(f"Save `{name}.module.state_dict()`", Replace(recv, f"{name}.module"), applicability=DISPLAY),
        )

    def _unwrapped_here(self, recv: cst.BaseExpression, name: str) -> bool:
        """The assignment that reaches this call binds a value that is not a wrapper (the model is wrapped
        only further down: `sd = model.state_dict()` before `model = DDP(model)`)."""
        body = body_of(self.ctx)
        index = body.index(recv)
        d = body.reaching(name, index) if index is not None else None
        return d is not None and d.value is not None and not self.ctx.kind(d.value) & Kind.WRAPPED
