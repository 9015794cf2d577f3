"""TL402 ddp-without-process-group: DDP / DistributedSampler without init_process_group"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.callargs import get_arg
from torchlint.engine.rule import Invalid, Rule
from torchlint.findings import Severity
from torchlint.rules.distributed._helpers import DDP, DIST_SAMPLER

_LAUNCHERS = (
    "accelerate",
    "lightning",
    "pytorch_lightning",
    "deepspeed",
    "horovod",
    "ignite",
    "colossalai",
    "fairscale",
)


def _launcher_initialises(ctx) -> bool:
    """The program initialises the process group itself, or hands that to a launcher library."""
    text = ctx.text
    if any(
        k in text for k in ("init_process_group", "is_initialized", "init_distributed", "initialize_model_parallel")
    ):
        return True
    if any(ctx.imports.imports_module(m) for m in _LAUNCHERS):
        return True
    # a helper imported from project code: `from utils import setup_ddp; setup_ddp(rank)`
    for local, q in ctx.imports.table.items():
        if not q.startswith("torch") and any(k in local.lower() for k in ("dist", "setup", "ddp", "init")):
            return True
    return False


class DdpWithoutProcessGroup(Rule):
    code = "TL402"
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
        "Flags `DistributedDataParallel(...)` and `DistributedSampler(...)` in a file that never calls "
        "`init_process_group` and shows no launcher library (Accelerate, Lightning, DeepSpeed, ...) or "
        "imported setup helper that would."
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
        self.done = "Distributed" not in self.ctx.text or _launcher_initialises(self.ctx)

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
        self.done = True
        self.report(node, self.message.format(what=what))
