"""TL401 ddp-before-device-move: DistributedDataParallel(model) before model.to(device)"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.core.walk import iter_nodes, iter_statements, small_statements
from torchlint.engine.rule import SAFE, InsertBefore, Invalid, NodeFix, RemoveStatement, Rule, fix
from torchlint.engine.semantic.names import dotted
from torchlint.engine.torch.device_moves import Move, move_call
from torchlint.findings import Severity

from ._helpers import DDP


def _statement_of(body: Sequence[cst.BaseStatement], node: cst.CSTNode) -> tuple[int, cst.BaseStatement] | None:
    """(index, statement) of the statement in `body` (flattened, source order) that contains `node`."""
    for i, stmt in enumerate(iter_statements(body)):
        for small in small_statements(stmt):
            if small is node or any(n is node for n in iter_nodes(small, into_functions=False)):
                return i, stmt
    return None


class DdpBeforeDeviceMove(Rule):
    code = "TL401"
    analyses = frozenset({Analysis.DEVICE_MOVES, Analysis.SCOPES})
    requires = ("DistributedDataParallel",)
    name = "ddp-before-device-move"
    message = (
        "`{model}` is wrapped in DistributedDataParallel before it is moved to its device (line order): DDP "
        "records parameter devices and broadcasts buffers at construction; move the model first, then wrap"
    )
    severity = Severity.ERROR
    category = "correctness"
    summary = "DistributedDataParallel(model) before model.to(device)"
    what = "Flags `DistributedDataParallel(model)` when `model` (or the wrapper) is moved with `.to(...)`/`.cuda()` only afterwards."
    why = (
        "DDP inspects the module's parameters when it is constructed: it picks the device for its "
        "gradient buckets and broadcasts rank 0's parameters from where they are. Wrapping a CPU model and "
        "moving it afterwards either raises (`device_ids` given for a CPU module) or leaves DDP's "
        "communication buffers on the wrong device."
    )
    example = """\
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(Net())
model.to(rank)
"""
    fix_example = """\
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

net = Net()
net.to(rank)
model = DDP(net)
"""
    fix_safety = (
        "Safe: the later move statement is moved above the wrap, so the wrapper sees the parameters "
        "where they will live. Offered when that move is its own statement on the wrapped name in the "
        "same block and its device expression is already defined before the wrap."
    )
    VALID = [
        """\
from torch.nn.parallel import DistributedDataParallel as DDP
model = Net().to(rank)
model = DDP(model, device_ids=[rank])
""",
        """\
import torch
model = Net()
model.cuda(rank)
ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank])
""",
        # CPU DDP (gloo): never moved
        """\
from torch.nn.parallel import DistributedDataParallel as DDP
model = DDP(Net())
""",
    ]
    INVALID = [
        Invalid(
            """\
from torch.nn.parallel import DistributedDataParallel as DDP
def main(rank):
    model = Net()
    ddp_model = DDP(model, device_ids=[rank])
    model.to(rank)
""",
            line=4,
            fixed="""\
from torch.nn.parallel import DistributedDataParallel as DDP
def main(rank):
    model = Net()
    model.to(rank)
    ddp_model = DDP(model, device_ids=[rank])
""",
        ),
        Invalid(
            """\
import torch.nn as nn
model = nn.parallel.DistributedDataParallel(model).cuda()
""",
            line=2,
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.qualname(node.func) != DDP or not node.args:
            return
        wrapped = dotted(node.args[0].value)
        body = self.ctx.body_statements
        found = _statement_of(body, node)
        if found is None:
            return
        index, stmt = found
        order = {id(s): i for i, s in enumerate(iter_statements(body))}
        names = {wrapped} if wrapped else set()
        for small in small_statements(stmt):
            if isinstance(small, cst.Assign) and small.value is node:
                names.update(name for name in (dotted(t.target) for t in small.targets) if name is not None)
        moves = self.ctx.device_moves
        chained = any(
            (moved := move_call(n, self.ctx.imports)) is not None and moved[0] is node
            for small in small_statements(stmt)
            for n in iter_nodes(small, into_functions=False)
        )
        own = [m for n in names for m in moves.of(n, self.ctx.scope_node) if id(m.stmt) in order]
        if any(order[id(m.stmt)] < index for m in own if m.target == wrapped):
            return  # moved before it was wrapped: a `.to(device)` after DDP changes nothing
        if chained:  # DDP(model).cuda()
            later, move = True, None
        else:
            after = sorted((m for m in own if order[id(m.stmt)] > index), key=lambda m: order[id(m.stmt)])
            later = bool(after)
            move = after[0] if after else None
        if later:
            self.report(
                node, self.message.format(model=wrapped or "the model"), fix=self._fix(move, wrapped, stmt, body, index)
            )

    def _fix(
        self,
        move: Move | None,
        wrapped: str | None,
        stmt: cst.BaseStatement,
        body: Sequence[cst.BaseStatement],
        index: int,
    ) -> NodeFix | None:
        if move is None or move.target != wrapped or not isinstance(move.stmt, cst.SimpleStatementLine):
            return None
        if len(move.stmt.body) != 1 or not any(s is move.stmt for s in body) or not any(s is stmt for s in body):
            return None  # only statements of the same block can be swapped
        if move.device is not None:
            needed = {n.value for n in (move.device, *iter_nodes(move.device)) if isinstance(n, cst.Name)}
            between = list(iter_statements(body))[index:]
            for s in between[: between.index(move.stmt)]:
                for small in small_statements(s):
                    if isinstance(small, cst.Assign) and any(dotted(t.target) in needed for t in small.targets):
                        return None
        code = self.ctx.module.code_for_node(move.stmt.body[0])
        return fix(
            "Move the model before wrapping it",
            RemoveStatement(move.stmt),
            InsertBefore(stmt, code),
            applicability=SAFE,
        )
