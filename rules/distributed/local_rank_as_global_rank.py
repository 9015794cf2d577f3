"""TL409 local-rank-as-global-rank: init_process_group(rank=LOCAL_RANK) repeats ranks across nodes"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.core.callargs import get_arg, string_value
from torchlint.engine.core.walk import iter_nodes
from torchlint.engine.flow.graph_flow import body_of
from torchlint.engine.flow.ranks import env_key
from torchlint.engine.rule import UNSAFE, Invalid, NodeFix, Replace, Rule, fix
from torchlint.findings import Severity

INIT = "torch.distributed.init_process_group"
# world sizes that count this node's processes only: the run is single-node by construction
_NODE_LOCAL = frozenset({"torch.cuda.device_count", "torch.accelerator.device_count"})


class LocalRankAsGlobalRank(Rule):
    code = "TL409"
    analyses = frozenset({Analysis.CALL_SITES, Analysis.GRAPH_BODIES, Analysis.OWN_SUMMARY, Analysis.SCOPES})
    requires = ("LOCAL_RANK",)
    name = "local-rank-as-global-rank"
    message = (
        "`rank=` is the process's LOCAL_RANK (its index on this node): on more than one node, processes on "
        "different nodes get the same rank and the group never forms; pass the global `RANK`"
    )
    severity = Severity.WARNING
    category = "correctness"
    summary = "init_process_group(rank=LOCAL_RANK): duplicate ranks on more than one node"
    what = (
        "Flags `init_process_group(rank=...)` whose rank is read from the `LOCAL_RANK` environment variable "
        "(directly, or through a name assigned from it), unless the world size counts this node's devices "
        "only (`world_size=torch.cuda.device_count()`: single-node by construction)."
    )
    why = (
        "`torchrun` sets `LOCAL_RANK` to the process's index on its node and `RANK` to its index in the whole "
        "job. With two nodes of 8 GPUs, `LOCAL_RANK` runs 0..7 on both: ranks repeat, rendezvous hangs or "
        "fails, or two processes share a rank and the collectives mix their data. On one node the two are "
        "equal, so the bug appears only when the job is scaled out."
    )
    example = """\
import os
import torch.distributed as dist

local_rank = int(os.environ["LOCAL_RANK"])
dist.init_process_group("nccl", rank=local_rank, world_size=int(os.environ["WORLD_SIZE"]))
"""
    fix_example = """\
import os
import torch.distributed as dist

local_rank = int(os.environ["LOCAL_RANK"])
dist.init_process_group("nccl", rank=int(os.environ["RANK"]), world_size=int(os.environ["WORLD_SIZE"]))
"""
    fix_safety = (
        "Unsafe: `RANK` must be set by the launcher (torchrun sets both); a script started by hand with only "
        "`LOCAL_RANK` exported would stop at the KeyError. Offered only when the environment read is written "
        "in the `rank=` argument itself (a `local_rank` variable also picks the device and stays)."
    )
    VALID = [
        'import os\nimport torch.distributed as dist\ndist.init_process_group("nccl", rank=int(os.environ["RANK"]))\n',
        # the local rank picks the device; the global rank forms the group
        """\
import os
import torch
import torch.distributed as dist
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl", rank=int(os.environ["RANK"]))
""",
        # single-node by construction: one process per local GPU
        """\
import os
import torch
import torch.distributed as dist
rank = int(os.environ["LOCAL_RANK"])
dist.init_process_group("nccl", rank=rank, world_size=torch.cuda.device_count())
""",
        # not the environment variable
        'import torch.distributed as dist\ndef run(rank, world):\n    dist.init_process_group("gloo", rank=rank, world_size=world)\n',
    ]
    INVALID = [
        Invalid(
            """\
import os
import torch.distributed as dist
dist.init_process_group(backend="nccl", rank=int(os.environ.get("LOCAL_RANK", 0)), world_size=16)
""",
            line=3,
            fixed="""\
import os
import torch.distributed as dist
dist.init_process_group(backend="nccl", rank=int(os.environ.get("RANK", 0)), world_size=16)
""",
        ),
        Invalid(
            """\
import os
from torch.distributed import init_process_group
def setup():
    local_rank = int(os.getenv("LOCAL_RANK"))
    init_process_group("nccl", rank=local_rank, world_size=int(os.environ["WORLD_SIZE"]))
""",
            line=5,
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.qualname(node.func) != INIT:
            return
        rank = get_arg(node, "rank", 4)
        if rank is None or self._node_local(get_arg(node, "world_size", 3)):
            return
        key = env_key(self.ctx, rank.value)
        inline = key is not None
        if key is None and isinstance(rank.value, cst.Name):
            body = body_of(self.ctx)
            index = body.index(node)
            d = body.reaching(rank.value.value, index) if index is not None else None
            key = env_key(self.ctx, d.value) if d is not None and d.value is not None else None
        if key is None or string_value(key) != "LOCAL_RANK":
            return
        self.report(rank, fix=self._fix(key) if inline else None)

    def _node_local(self, world: cst.Arg | None) -> bool:
        if world is None:
            return False
        nodes = (world.value, *iter_nodes(world.value, into_functions=False))
        return any(isinstance(n, cst.Call) and self.ctx.qualname(n.func) in _NODE_LOCAL for n in nodes) or (
            (key := env_key(self.ctx, world.value)) is not None and string_value(key) == "LOCAL_WORLD_SIZE"
        )

    def _fix(self, key: cst.SimpleString) -> NodeFix:
        quote = key.value[-1]
        return fix(
            "Read the global `RANK`",
            Replace(key, cst.SimpleString(f"{quote}RANK{quote}")),
            applicability=UNSAFE,
            risk="needs a launcher that sets RANK (torchrun does)",
        )
