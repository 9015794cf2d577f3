"""TL408 ddp-accumulation-without-no-sync: gradient accumulation on a DDP model all-reduces every micro-step"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.core.walk import iter_nodes
from torchlint.engine.flow.blocks import Loop
from torchlint.engine.flow.graph_flow import body_of
from torchlint.engine.flow.iteration_values import is_periodic
from torchlint.engine.flow.loop_events import Event, EventKind
from torchlint.engine.rule import Invalid, Rule
from torchlint.engine.semantic.kinds import Kind
from torchlint.engine.semantic.values import current_where
from torchlint.findings import Severity

from ._helpers import DDP

# What turns the gradient all-reduce off for a micro-step (DDP's, Accelerate's, or by hand).
# DDP's, Accelerate's and Lightning Fabric's ways to skip the all-reduce of a micro-step.
_SYNC_CONTROLS = frozenset({"no_sync", "accumulate", "require_backward_grad_sync", "no_backward_sync"})


class DdpAccumulationWithoutNoSync(Rule):
    code = "TL408"
    analyses = frozenset(
        {
            Analysis.CALL_SITES,
            Analysis.GRAPH_BODIES,
            Analysis.KINDS,
            Analysis.LOCAL_FUNCTIONS,
            Analysis.LOOP_ANALYSIS,
            Analysis.OWN_SUMMARY,
            Analysis.SCOPES,
            Analysis.VALUES,
        }
    )
    requires = ("DistributedDataParallel", "prepare")
    name = "ddp-accumulation-without-no-sync"
    message = (
        "`{backward}` runs on every micro-step of {model}, but the optimizer steps only under `if {test}`: "
        "each micro-batch all-reduces the gradients across processes; {remedy}"
    )
    severity = Severity.WARNING
    category = "performance"
    summary = "Gradient accumulation on a DDP model without no_sync(): an all-reduce every micro-batch"
    what = (
        "Flags a training loop that accumulates gradients — `backward()` every iteration, `optimizer.step()` "
        "only under a periodic `if` (`(i + 1) % accum == 0`) — on a model wrapped in "
        "`DistributedDataParallel` in this code, or with `accelerator.backward(...)`, when nothing in the "
        "loop turns the gradient synchronisation off (`model.no_sync()`, `accelerator.accumulate(model)`, "
        "`accelerator.no_sync(model)`, Fabric's `fabric.no_backward_sync(model)`, `require_backward_grad_sync`). "
        "Accumulation without DDP is left alone."
    )
    why = (
        "DDP all-reduces the gradients at the end of every backward pass. When the optimizer steps only "
        "every k micro-batches, the first k-1 all-reduces are wasted: the result is the same, but the "
        "communication is paid k times per step, and on a multi-node job it often dominates the step time. "
        "`no_sync()` accumulates locally and synchronises once, at the micro-step that steps."
    )
    opt_in = (
        "Measured on ten public training repositories it was not tuned on, it reported 8 loops, all copies of "
        "Accelerate's example loop, where the accumulation factor is computed and is 1 with the shipped "
        "batch size: the optimizer steps every micro-batch as configured, so nothing is wasted (8 debatable, "
        "0 right). The statement is true whenever accumulation is on; select it where it is."
    )
    example = """\
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(net.to(rank), device_ids=[rank])
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y) / accum_steps
    loss.backward()
    if (i + 1) % accum_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
"""
    VALID = [
        # the non-stepping micro-steps skip the all-reduce
        """\
import contextlib
from torch.nn.parallel import DistributedDataParallel as DDP
model = DDP(net)
for i, (x, y) in enumerate(loader):
    stepping = (i + 1) % accum == 0
    with contextlib.nullcontext() if stepping else model.no_sync():
        loss = criterion(model(x), y) / accum
        loss.backward()
    if stepping:
        optimizer.step()
        optimizer.zero_grad()
""",
        # Accelerate's accumulate()
        """\
from accelerate import Accelerator
accelerator = Accelerator(gradient_accumulation_steps=4)
model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
for i, (x, y) in enumerate(loader):
    with accelerator.accumulate(model):
        loss = criterion(model(x), y)
        accelerator.backward(loss)
        if (i + 1) % 4 == 0:
            optimizer.step()
            optimizer.zero_grad()
""",
        # accumulation without DDP
        """\
from torch import nn
model = nn.Linear(4, 2).cuda()
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y) / accum
    loss.backward()
    if (i + 1) % accum == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
        # a step every iteration
        """\
from torch.nn.parallel import DistributedDataParallel as DDP
model = DDP(net)
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
""",
    ]
    INVALID = [
        Invalid(
            """\
import torch
from torch.nn.parallel import DistributedDataParallel
def train(net, loader, accum):
    model = DistributedDataParallel(net)
    optimizer = torch.optim.AdamW(model.parameters())
    for step, (x, y) in enumerate(loader):
        loss = model(x).mean() / accum
        loss.backward()
        if step % accum == accum - 1:
            optimizer.step()
            optimizer.zero_grad()
""",
            line=8,
        ),
        Invalid(
            """\
import torch
from accelerate import Accelerator
accelerator = Accelerator()
optimizer = torch.optim.AdamW(model.parameters())
model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
for i, batch in enumerate(loader):
    loss = model(**batch).loss / 8
    accelerator.backward(loss)
    if (i + 1) % 8 == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
            line=8,
        ),
    ]

    def visit_For(self, node: cst.For) -> None:
        self._check(node)

    def visit_While(self, node: cst.While) -> None:
        self._check(node)

    def _check(self, loop: Loop) -> None:
        events = self.ctx.loop_analysis.events(loop)
        steps = [e for e in events if e.kind is EventKind.STEP and e.depth == 0 and e.via is None]
        periodic = [_periodic_test(e) for e in steps]
        if not steps or any(test is None for test in periodic):
            return
        backwards = [
            e
            for e in events
            if e.kind is EventKind.BACKWARD and e.depth == 0 and e.via is None and _periodic_test(e) is None
        ]
        if not backwards or self._controls_sync(loop):
            return
        backward = backwards[0]
        model = self._synchronised_model(loop, backward)
        if model is None:
            return
        test = periodic[0]
        assert test is not None, "checked above"
        code = self.ctx.module.code_for_node
        if model == "":
            text, remedy = "the prepared model", "run each micro-step under `with accelerator.accumulate(model):`"
        else:
            text, remedy = (
                f"the DDP model `{model}`",
                f"run the micro-steps that do not step under `with {model}.no_sync():`",
            )
        message = self.message.format(backward=code(backward.node), model=text, test=code(test), remedy=remedy)
        self.report(backward.node, message)

    def _controls_sync(self, loop: Loop) -> bool:
        return any(
            isinstance(n, (cst.Attribute, cst.Name)) and _last(n) in _SYNC_CONTROLS
            for n in iter_nodes(loop, into_functions=False)
        )

    def _synchronised_model(self, loop: Loop, backward: Event) -> str | None:
        """The DDP-wrapped model forwarded in this loop (its text), "" for an Accelerate backward, None: neither."""
        call = backward.node
        if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute):
            if self.ctx.kind(call.func.value) & Kind.ACCELERATOR:
                return ""
        body = body_of(self.ctx)
        where = current_where(self.ctx)
        for forward, _, loops, no_grad in body.forwards:
            if loop not in loops or no_grad:
                continue
            func = forward.func
            model = func.value if isinstance(func, cst.Attribute) and func.attr.value == "forward" else func
            found = self.ctx.values.value_of(model, where)
            if found is not None and isinstance(found[0], cst.Call) and self.ctx.qualname(found[0].func) == DDP:
                return self.ctx.module.code_for_node(model)
        return None


def _periodic_test(event: Event) -> cst.BaseExpression | None:
    """The periodic `if` test the event runs under (`(i + 1) % k == 0`), if any."""
    for node, arm in event.path:
        if isinstance(node, cst.If) and arm == "if" and is_periodic(node.test):
            return node.test
    return None


def _last(node: cst.Attribute | cst.Name) -> str:
    return node.attr.value if isinstance(node, cst.Attribute) else node.value
