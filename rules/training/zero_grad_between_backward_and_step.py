"""TL102 zero-grad-between-backward-and-step: zero_grad() between backward() and step() wipes the gradients before they are used"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.flow.blocks import Loop
from torchlint.engine.flow.loop_events import Event, EventKind, dominates, exclusive
from torchlint.engine.rule import SAFE, InsertBefore, Invalid, RemoveStatement, fix
from torchlint.engine.semantic.kinds import Kind
from torchlint.findings import Severity

from ._helpers import LoopRule, dotted_or


class ZeroGradBetweenBackwardAndStep(LoopRule):
    code = "TL102"
    analyses = frozenset(
        {
            Analysis.CALL_SITES,
            Analysis.KINDS,
            Analysis.LOCAL_FUNCTIONS,
            Analysis.LOOP_ANALYSIS,
            Analysis.OWN_SUMMARY,
            Analysis.SCOPES,
        }
    )
    requires = ("backward",)
    name = "zero-grad-between-backward-and-step"
    message = "`{call}` runs after `backward()` and before `{step}`: the step applies zero gradients and the model does not learn"
    severity = Severity.ERROR
    category = "correctness"
    summary = "zero_grad() between backward() and step() wipes the gradients before they are used"
    what = (
        "Flags `zero_grad()` that runs after `backward()` and before the optimizer's `step()` in the same "
        "loop iteration, on every path."
    )
    why = (
        "`backward()` fills `.grad`; `zero_grad()` then clears it, so `step()` sees zero (or `None`) "
        "gradients. The loop runs, the loss is printed, but the weights never change (with momentum "
        "or weight decay they drift). Nothing raises."
    )
    example = """\
import torch

model = torch.nn.Linear(8, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = torch.nn.CrossEntropyLoss()

for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.zero_grad()
    optimizer.step()
"""
    fix_example = """\
import torch

model = torch.nn.Linear(8, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = torch.nn.CrossEntropyLoss()

for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
"""
    fix_safety = (
        "Moves the `zero_grad()` call to the start of the loop body, before the forward pass. Safe: "
        "the gradients it cleared were never used."
    )
    VALID = [
        """\
for x, y in loader:
    optimizer.zero_grad()
    criterion(model(x), y).backward()
    optimizer.step()
""",
        # clear after the step (gradient accumulation)
        """\
for i, (x, y) in enumerate(loader):
    criterion(model(x), y).backward()
    if (i + 1) % 4 == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
        # a GAN clears the other network's gradients polluted by this backward
        """\
for real in loader:
    d_loss = critic(real)
    d_loss.backward()
    opt_g.zero_grad()
    opt_d.step()
""",
        # skip the step on a bad loss
        """\
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    if not torch.isfinite(loss):
        optimizer.zero_grad()
    optimizer.step()
""",
    ]
    INVALID = [
        Invalid(
            """\
import torch
model = torch.nn.Linear(4, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    out = model(x)
    loss = torch.nn.functional.mse_loss(out, y)
    loss.backward()
    opt.zero_grad()
    opt.step()
""",
            line=8,
            fixed="""\
import torch
model = torch.nn.Linear(4, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    opt.zero_grad()
    out = model(x)
    loss = torch.nn.functional.mse_loss(out, y)
    loss.backward()
    opt.step()
""",
        ),
        Invalid(
            """\
import torch
class Trainer:
    def __init__(self):
        self.model = torch.nn.Linear(4, 2)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.scaler = torch.amp.GradScaler("cuda")
        self.loss_fn = torch.nn.MSELoss()
    def train_step(self, batch):
        for x, y in batch:
            self.loss_fn(self.model(x), y).backward()
            self.model.zero_grad()
            self.scaler.step(self.optimizer)
            self.scaler.update()
""",
            line=11,
            fixed="""\
import torch
class Trainer:
    def __init__(self):
        self.model = torch.nn.Linear(4, 2)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.scaler = torch.amp.GradScaler("cuda")
        self.loss_fn = torch.nn.MSELoss()
    def train_step(self, batch):
        for x, y in batch:
            self.model.zero_grad()
            self.loss_fn(self.model(x), y).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()
""",
        ),
    ]

    def _check(self, loop: Loop, events: list[Event]) -> None:
        steps = {s for s in events if s.kind is EventKind.STEP}
        for i, z in enumerate(events):
            if z.kind is not EventKind.ZERO_GRAD or z.depth or not isinstance(z.node, cst.Call):
                continue
            if not any(b.kind is EventKind.BACKWARD and not exclusive(b, z) for b in events[:i]):
                continue
            step = self._next_step(events[i + 1 :], z, steps)
            if step is None:
                continue
            call = self._code(z.node)
            first = self._first(loop)
            edit = None
            if z.movable and first is not None:
                already = any(
                    e.kind is EventKind.ZERO_GRAD
                    and not e.path
                    and e.depth == 0
                    and dotted_or(e.target, "") == dotted_or(z.target, "?")
                    for e in events[:i]
                )
                edits = (
                    (RemoveStatement(z.movable),)
                    if already
                    else (InsertBefore(first, call), RemoveStatement(z.movable))
                )
                edit = fix("Move the `zero_grad()` call to the start of the loop body", *edits, applicability=SAFE)
            self.report(z.node, self.message.format(call=call, step=self._code(step.node)), fix=edit)

    def _next_step(self, after: list[Event], z: Event, steps: set[Event]) -> Event | None:
        for e in after:
            if e.kind is EventKind.BACKWARD and not exclusive(e, z):
                return None  # gradients are recomputed before the step
            if e in steps and e.depth == 0 and dominates(z, e) and self._clears(z, e, steps):
                return e
        return None

    def _clears(self, z: Event, step: Event, steps: set[Event]) -> bool:
        if z.target is not None and self.ctx.kind(z.target) & Kind.OPTIMIZER:
            return dotted_or(z.target, "") == dotted_or(step.target, "?")
        # model.zero_grad(): only when one optimizer is stepped, so it must be that model's
        return len({dotted_or(s.target, "") for s in steps}) == 1
