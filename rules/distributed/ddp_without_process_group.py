"""TL402 ddp-without-process-group: DDP / DistributedSampler without init_process_group"""

from __future__ import annotations

import sys

import libcst as cst

from torchlint.engine.context import FileContext
from torchlint.engine.core.analyses import Analysis
from torchlint.engine.core.callargs import get_arg
from torchlint.engine.rule import Invalid, Rule
from torchlint.engine.semantic.kinds import LAUNCHER_LIBRARIES, PROCESS_GROUP_INIT, PROCESS_GROUP_SETUP
from torchlint.findings import Severity

from ._helpers import DDP, DIST_SAMPLER


def _set_up_elsewhere(ctx: FileContext) -> bool:
    """A launcher library sets the process group up, or the program (or a caller of this library) does."""
    if any(ctx.imports.imports_module(m) for m in LAUNCHER_LIBRARIES):
        return True
    return ctx.program_calls(*PROCESS_GROUP_SETUP) or _unknown_setup_call(ctx)


def _set_up_in_project(ctx: FileContext) -> bool:
    """Some file of the project (or one it cannot list) sets a process group up."""
    project = ctx.project
    return project is None or any(project.calling(n) != [] for n in PROCESS_GROUP_INIT)


def _unknown_setup_call(ctx: FileContext) -> bool:
    """`setup()` run for its effect, imported from code we cannot read: it may set the group up."""
    for call in ctx.statement_calls:
        q = ctx.qualname(call.func)
        if q is None or q.split(".")[0] in ("torch", *sys.stdlib_module_names):
            continue
        if ctx.project is None or ctx.project.resolve(q, ctx.location.parent) is None:
            return True
    return False


class DdpWithoutProcessGroup(Rule):
    code = "TL402"
    analyses = frozenset(
        {
            Analysis.CALLING_CONTEXTS,
            Analysis.CALL_SITES,
            Analysis.IS_PROGRAM,
            Analysis.OWN_SUMMARY,
            Analysis.SCOPES,
            Analysis.STATEMENT_CALLS,
            Analysis.VALUES,
        }
    )
    requires = ("Distributed",)
    name = "ddp-without-process-group"
    message = (
        "`{what}` needs an initialised process group, but this program never calls "
        "`torch.distributed.init_process_group(...)`: it raises `Default process group has not been initialized`"
    )
    severity = Severity.ERROR
    category = "correctness"
    summary = "DDP / DistributedSampler without init_process_group"
    what = (
        "Flags `DistributedDataParallel(...)` and `DistributedSampler(...)` in a program that never calls "
        "`init_process_group` — neither the file nor the project modules it imports — and uses no launcher "
        "library (Accelerate, Lightning, DeepSpeed, ...) that would. A library module is judged with its "
        "callers: it is flagged when no file that imports it sets the process group up and either no file of "
        "the project does or every path into the call is proven to start where none ran before it. Silent "
        "where a set-up runs before the call, in its function or before every call of that function (a "
        "method: every `x.m(...)` of the project), directly or through a project helper that calls "
        "`init_process_group`, in any file."
    )
    why = (
        "Both query the default process group at construction (`DistributedSampler` for the world size and "
        "rank when they are not given). `torchrun` only sets environment variables; the script must still "
        "call `init_process_group`."
    )
    example = """\
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(Net().cuda())
"""
    VALID = [
        """\
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
dist.init_process_group("nccl")
model = DDP(Net().cuda())
""",
        """\
from torch.utils.data import DistributedSampler
sampler = DistributedSampler(ds, num_replicas=world_size, rank=rank)
""",
        """\
from my_project.dist_utils import setup
from torch.nn.parallel import DistributedDataParallel as DDP
setup()
model = DDP(net)
""",
    ]
    INVALID = [
        Invalid(
            "from torch.utils.data import DistributedSampler, DataLoader\n"
            "loader = DataLoader(ds, sampler=DistributedSampler(ds))\n",
            line=2,
        ),
    ]

    def visit_Module(self, node: cst.Module) -> None:
        self.done = False  # the file names a DistributedDataParallel or a DistributedSampler (`requires`)
        self.elsewhere: bool | None = None  # `_set_up_elsewhere`, asked once

    def visit_Call(self, node: cst.Call) -> None:
        if self.done:
            return
        q = self.ctx.qualname(node.func)
        if q == DIST_SAMPLER:
            if get_arg(node, "num_replicas", 1) is not None and get_arg(node, "rank", 2) is not None:
                return
            what = "DistributedSampler"
        elif q == DDP:
            what = "DistributedDataParallel"
        else:
            return
        # Asked at the first wrapper or sampler, not for every file that names one: the answer reads the
        # program around the file (its imports, its callers: a scan of the project).
        if self.elsewhere is None:
            self.elsewhere = _set_up_elsewhere(self.ctx)
        if self.elsewhere:
            self.done = True
            return
        # Then the call's own context, through its callers in any file (asked last: it reads them): set up
        # before it, or (a library module of a project that sets a group up somewhere) not proven missing.
        found = self.ctx.context_at(node).process_group
        if found or found is None and not self.ctx.is_program and _set_up_in_project(self.ctx):
            return
        self.done = True
        self.report(node, self.message.format(what=what))
