"""TL118 host-sync-every-step: a device sync every step for a value read only every N steps or on one process"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.core.walk import block_statements, iter_nodes
from torchlint.engine.flow.blocks import Loop
from torchlint.engine.flow.graph_flow import Body, body_of
from torchlint.engine.flow.iteration_values import is_periodic, on_device, periodic_readers, read_outside
from torchlint.engine.flow.loop_events import Event, EventKind
from torchlint.engine.flow.ranks import rank_zero_test
from torchlint.engine.rule import SAFE, InsertBefore, Invalid, NodeFix, RemoveStatement, fix
from torchlint.engine.semantic.kinds import Kind
from torchlint.findings import Severity

from ._helpers import LoopRule

_SYNC_METHODS = frozenset({"item", "cpu", "tolist", "numpy"})
_DEVICE_SYNCS = frozenset({"torch.cuda.synchronize", "torch.accelerator.synchronize", "torch.xpu.synchronize"})
_CLOCKS = frozenset({"time.time", "time.perf_counter", "time.monotonic", "time.time_ns", "time.perf_counter_ns"})
_ALL_REDUCE = "torch.distributed.all_reduce"


class HostSyncEveryStep(LoopRule):
    code = "TL118"
    analyses = frozenset(
        {
            Analysis.CALL_SITES,
            Analysis.GRAPH_BODIES,
            Analysis.IS_PROGRAM,
            Analysis.KINDS,
            Analysis.LOCAL_FUNCTIONS,
            Analysis.LOOP_ANALYSIS,
            Analysis.OWN_SUMMARY,
            Analysis.SCOPES,
            Analysis.STAYS_ON_CPU,
        }
    )
    requires = ("item", "cpu", "tolist", "numpy", "float", "synchronize", "all_reduce")
    name = "host-sync-every-step"
    message = "`{sync}` waits for the device every step, but `{value}` is only read under `if {test}`: move `{value} = ...` inside that `if`"
    clock_message = (
        "`{sync}` waits for the device every step, but the time `{value}` it settles is only read under "
        "`if {test}`: synchronize (and read the clock) inside that `if`"
    )
    reduce_message = (
        "`{sync}` makes every process wait for the others every step, but `{value}` is only read under "
        "`if {test}`: reduce it inside that `if`"
    )
    severity = Severity.WARNING
    category = "performance"
    summary = (
        "A device sync every step (host copy, synchronize, all_reduce) for a value read only every N steps or on rank 0"
    )
    what = (
        "Flags `value = <tensor>.item()` (or `.cpu()`, `.tolist()`, `.numpy()`, `float(<tensor>)`) computed in "
        "every iteration of a training loop, on a tensor built from a model's output or a loss, when "
        "`value` is read only under a periodic condition (`if step % log_every == 0`) or on one process "
        "(`if dist.get_rank() == 0`, `if accelerator.is_main_process`, a rank read from the environment). "
        "Also `torch.cuda.synchronize()` followed by a clock read (`t = time.time()`) read only under such a "
        "condition, and `dist.all_reduce(t)` of a loss value read only under a periodic one (a collective "
        "must stay where every rank runs it, so not under a rank test)."
    )
    why = (
        "Copying a device tensor to the host waits for every kernel queued so far: the CPU stops feeding "
        "the GPU until the step finishes. Once a step that is the price of logging; every step, for a "
        "number read one step in a hundred, it stalls the pipeline for nothing. Moving the copy under "
        "the condition pays it only when the value is used. The same holds for `torch.cuda.synchronize()` "
        "taken only to time a step that is logged now and then, for a value read on rank 0 only (every other "
        "rank waits for nothing), and for `dist.all_reduce` of a logged loss, which also makes every process "
        "wait for the slowest one."
    )
    example = """\
import torch
from torch import nn

model = nn.Linear(16, 4).cuda()
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step, (x, y) in enumerate(loader):
    loss = criterion(model(x.cuda()), y.cuda())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    loss_value = loss.item()
    if step % 100 == 0:
        print(f"step {step}: loss {loss_value:.4f}")
"""
    fix_example = """\
import torch
from torch import nn

model = nn.Linear(16, 4).cuda()
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step, (x, y) in enumerate(loader):
    loss = criterion(model(x.cuda()), y.cuda())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 100 == 0:
        loss_value = loss.item()
        print(f"step {step}: loss {loss_value:.4f}")
"""
    fix_safety = (
        "Safe: moves the statement, unchanged, to the top of the `if` body. Offered only when that is a "
        "pure move: the statement and the `if` are in the same block, the value is read nowhere else, and "
        "nothing between them names what the statement reads (so it computes the same value later)."
    )
    VALID = [
        # already under the condition
        """\
from torch import nn
model = nn.Linear(4, 2).cuda()
for step, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    if step % 50 == 0:
        print(loss.item())
""",
        # accumulated every step
        """\
from torch import nn
model = nn.Linear(4, 2).cuda()
running = 0.0
for step, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    running += loss.item()
    if step % 50 == 0:
        print(running / 50)
        running = 0.0
""",
        # a progress bar reads it every step
        """\
from torch import nn
model = nn.Linear(4, 2).cuda()
for step, (x, y) in enumerate(pbar):
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    value = loss.item()
    pbar.set_postfix(loss=value)
    if step % 50 == 0:
        print(value)
""",
        # already a host value
        """\
from torch import nn
model = nn.Linear(4, 2).cuda()
for step, (x, y) in enumerate(loader):
    labels = y.numpy()
    loss = criterion(model(x.cuda()), y.cuda())
    loss.backward()
    optimizer.step()
    if step % 50 == 0:
        print(labels[:4])
""",
        # a timing read every step
        """\
import time
import torch
from torch import nn
model = nn.Linear(4, 2).cuda()
total = 0.0
for step, (x, y) in enumerate(loader):
    t0 = time.time()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    torch.cuda.synchronize()
    t1 = time.time()
    total += t1 - t0
    if step % 50 == 0:
        print(total)
""",
        # reduced under the rank test's sibling: every rank reads the reduced loss
        """\
import torch
import torch.distributed as dist
from torch import nn
model = nn.Linear(4, 2).cuda()
for step, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    reduced = loss.detach().clone()
    dist.all_reduce(reduced)
    scheduler.step(reduced)
""",
        # a program that never leaves the CPU: nothing to wait for
        """\
from torch import nn
model = nn.Linear(4, 2)
for step, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    value = loss.item()
    if step % 50 == 0:
        print(value)
""",
    ]
    INVALID = [
        Invalid(
            """\
from torch import nn
model = nn.Linear(4, 2).cuda()
criterion = nn.MSELoss()
for step, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    value = loss.item()
    if step % 50 == 0:
        print(value)
""",
            line=8,
            fixed="""\
from torch import nn
model = nn.Linear(4, 2).cuda()
criterion = nn.MSELoss()
for step, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    if step % 50 == 0:
        value = loss.item()
        print(value)
""",
        ),
        # predictions copied every step for a periodic accuracy print; read in two places: no fix
        Invalid(
            """\
from torch import nn
model = nn.Linear(4, 2).to("cuda")
for i, (x, y) in enumerate(loader):
    out = model(x)
    loss = criterion(out, y)
    loss.backward()
    optimizer.step()
    preds = out.argmax(1).cpu()
    if i % 10 == 0:
        print(preds[:8])
    if i % 100 == 0:
        save(preds)
""",
            line=8,
        ),
        # read on rank 0 only
        Invalid(
            """\
import torch.distributed as dist
from torch import nn
model = nn.Linear(4, 2).cuda()
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    value = loss.item()
    if dist.get_rank() == 0:
        print(value)
""",
            line=8,
            fixed="""\
import torch.distributed as dist
from torch import nn
model = nn.Linear(4, 2).cuda()
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    if dist.get_rank() == 0:
        value = loss.item()
        print(value)
""",
        ),
        # a synchronize for a time logged every 100 steps
        Invalid(
            """\
import time
import torch
from torch import nn
model = nn.Linear(4, 2).cuda()
for step, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    torch.cuda.synchronize()
    now = time.perf_counter()
    if step % 100 == 0:
        print(now)
""",
            line=9,
        ),
        # a loss all-reduced every step for a periodic print
        Invalid(
            """\
import torch.distributed as dist
from torch import nn
model = nn.Linear(4, 2).cuda()
for step, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    logged = loss.detach()
    dist.all_reduce(logged)
    if step % 10 == 0:
        print(logged / dist.get_world_size())
""",
            line=9,
        ),
    ]

    def _check(self, loop: Loop, events: list[Event]) -> None:
        if not any(e.kind in (EventKind.BACKWARD, EventKind.STEP) and e.depth == 0 for e in events):
            return
        if self.ctx.stays_on_cpu:
            return
        body = body_of(self.ctx)
        block = block_statements(loop.body)
        steps = _every_step(block)
        for i, stmt in enumerate(steps):
            self._statement(body, loop, block, stmt)
            call = _call_statement(stmt)
            q = self.ctx.qualname(call.func) if call is not None else None
            if call is not None and q in _DEVICE_SYNCS and i + 1 < len(steps):
                self._clock(body, loop, call, steps[i + 1])
            elif call is not None and q == _ALL_REDUCE:
                self._reduced(body, loop, call)

    def _rare(self, body: Body, loop: Loop) -> Callable[[cst.BaseExpression], bool]:
        """Tests that hold now and then: periodic ones, and those that hold on one process only."""
        index = body.index(loop)
        return lambda test: is_periodic(test) or (index is not None and rank_zero_test(self.ctx, body, test, index))

    def _clock(self, body: Body, loop: Loop, sync: cst.Call, following: cst.BaseStatement) -> None:
        """`torch.cuda.synchronize()` then `t = time.time()`, `t` read only under a rare condition."""
        if not isinstance(following, cst.SimpleStatementLine) or len(following.body) != 1:
            return
        assign = following.body[0]
        if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
            return
        target, value = assign.targets[0].target, assign.value
        if not isinstance(target, cst.Name) or not isinstance(value, cst.Call):
            return
        if self.ctx.qualname(value.func) not in _CLOCKS:
            return
        self._report_rare(body, loop, sync, target, (target,), self._rare(body, loop), self.clock_message)

    def _reduced(self, body: Body, loop: Loop, call: cst.Call) -> None:
        """`dist.all_reduce(t)` of a loss value made in this iteration, `t` read only under a periodic `if`."""
        if not call.args or not isinstance(call.args[0].value, cst.Name):
            return
        tensor = call.args[0].value
        index = body.index(call)
        d = body.reaching(tensor.value, index) if index is not None else None
        if d is None or d.value is None or loop not in d.loops:
            return
        if not any(isinstance(n, (cst.Name, cst.Attribute)) and body.kind(n) & Kind.LOSS for n in iter_nodes(d.value)):
            return
        skip = (tensor, *(n for n in iter_nodes(d.stmt) if isinstance(n, cst.Name) and n.value == tensor.value))
        self._report_rare(body, loop, call, tensor, skip, is_periodic, self.reduce_message)

    def _report_rare(
        self,
        body: Body,
        loop: Loop,
        sync: cst.Call,
        value: cst.Name,
        skip: tuple[cst.CSTNode, ...],
        rare: Callable[[cst.BaseExpression], bool],
        message: str,
    ) -> None:
        name = value.value
        if sum(1 for d in body.defs.get(name, ()) if loop in d.loops) > 1:
            return
        arms = periodic_readers(loop, name, skip, rare)
        if arms is None or read_outside(body.node, loop, name):
            return
        code = self.ctx.module.code_for_node
        self.report(sync, message.format(sync=code(sync), value=name, test=code(arms[0].test)))

    def _statement(self, body: Body, loop: Loop, block: list[cst.BaseStatement], stmt: cst.BaseStatement) -> None:
        if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
            return
        assign = stmt.body[0]
        if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
            return
        target = assign.targets[0].target
        index = body.index(stmt)
        if not isinstance(target, cst.Name) or index is None:
            return
        sync = self._sync(body, assign.value, index)
        if sync is None:
            return
        name = target.value
        if any(loop in d.loops and d.stmt is not stmt for d in body.defs.get(name, ())):
            return
        arms = periodic_readers(loop, name, (target,), self._rare(body, loop))
        if arms is None or read_outside(body.node, loop, name):
            return
        code = self.ctx.module.code_for_node
        message = self.message.format(sync=code(sync), value=name, test=code(arms[0].test))
        self.report(sync, message, fix=self._move(block, stmt, assign, arms))

    def _sync(self, body: Body, value: cst.BaseExpression, index: int) -> cst.Call | None:
        """The first host copy of a device tensor in `value`."""
        for n in (value, *iter_nodes(value, into_functions=False)):
            if not isinstance(n, cst.Call):
                continue
            func = n.func
            if isinstance(func, cst.Attribute) and func.attr.value in _SYNC_METHODS and not n.args:
                tensor: cst.BaseExpression | None = func.value
            elif self.ctx.builtin(func) == "float" and len(n.args) == 1:
                tensor = n.args[0].value
            else:
                continue
            if tensor is not None and not _is_host_copy(tensor) and on_device(body, tensor, index):
                return n
        return None

    def _move(
        self, block: list[cst.BaseStatement], stmt: cst.SimpleStatementLine, assign: cst.Assign, arms: list[cst.If]
    ) -> NodeFix | None:
        """Moving `stmt` to the top of the one `if` that reads its value, when that is a pure move."""
        if len(arms) != 1 or arms[0] not in block or stmt not in block:
            return None
        arm = arms[0]
        start, end = block.index(stmt), block.index(arm)
        if start > end or not isinstance(arm.body, cst.IndentedBlock):
            return None
        value = assign.value
        reads = {n.value for n in iter_nodes(value) if isinstance(n, cst.Name)}
        for n in iter_nodes(value, into_functions=False):
            if isinstance(n, cst.Attribute) and self.ctx.kind(n.value) & Kind.MODEL:
                return None  # a parameter's value changes with the optimizer step
        between = block[start + 1 : end] + [arm.test]
        for node in between:
            if any(isinstance(n, cst.Name) and n.value in reads for n in (node, *iter_nodes(node))):
                return None
        code = self.ctx.module.code_for_node(stmt.with_changes(leading_lines=())).rstrip("\r\n")
        return fix(
            "Move the host copy inside the `if`",
            RemoveStatement(stmt),
            InsertBefore(arm.body.body[0], code),
            applicability=SAFE,
        )


def _every_step(block: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
    """Statements of a loop body that run in every iteration: the body's own, and those of `with` blocks and
    `try` bodies in it."""
    out: list[cst.BaseStatement] = []
    for stmt in block:
        if isinstance(stmt, (cst.With, cst.Try)):
            out.extend(_every_step(block_statements(stmt.body)))
        else:
            out.append(stmt)
    return out


def _call_statement(stmt: cst.BaseStatement) -> cst.Call | None:
    """The call of a statement that is one call and nothing else (`torch.cuda.synchronize()`)."""
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
        expr = stmt.body[0]
        if isinstance(expr, cst.Expr) and isinstance(expr.value, cst.Call):
            return expr.value
    return None


def _is_host_copy(expr: cst.BaseExpression) -> bool:
    """`x.cpu()` (then `.numpy()` copies nothing more)."""
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _SYNC_METHODS
