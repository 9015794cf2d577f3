"""TL101 missing-zero-grad: Training loop calls backward() and step() but never clears gradients"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.flow.blocks import Loop
from torchlint.engine.flow.loop_events import Event, EventKind
from torchlint.engine.rule import SAFE, InsertBefore, Invalid, fix
from torchlint.engine.semantic.kinds import Kind
from torchlint.engine.semantic.names import dotted
from torchlint.findings import Severity

from ._helpers import LoopRule, dotted_or


class MissingZeroGrad(LoopRule):
    code = "TL101"
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
    name = "missing-zero-grad"
    message = "gradients are never cleared in this training loop: `{opt}.step()` applies gradients accumulated over every previous step"
    severity = Severity.ERROR
    category = "correctness"
    summary = "Training loop calls backward() and step() but never clears gradients"
    what = (
        "Flags a loop that calls `.backward()` and an optimizer's `step()` in each iteration but never "
        "clears gradients inside the loop (`optimizer.zero_grad()`, `model.zero_grad()`, "
        "`p.grad = None`). With several optimizers, one that is stepped but never cleared is flagged."
    )
    why = (
        "`backward()` adds into `.grad`; it does not overwrite it. Without clearing, every step applies "
        "the sum of all gradients computed so far, so the effective learning rate grows each iteration "
        "and training diverges or stalls — silently, with no error."
    )
    example = """\
import torch

model = torch.nn.Linear(8, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = torch.nn.CrossEntropyLoss()

for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
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
        "Safe for ordinary training loops. If you meant to accumulate gradients across iterations, "
        "clear them after each `step()` instead (see the gradient-accumulation example) and ignore the fix. "
        "Offered only when the stepped object is known to be an optimizer (another object may have no "
        "`zero_grad`)."
    )
    VALID = [
        """\
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
""",
        # gradient accumulation: clear after each step
        """\
import torch
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
optimizer.zero_grad()
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y) / 4
    loss.backward()
    if (i + 1) % 4 == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
        """\
for x, y in loader:
    optimizer.zero_grad(set_to_none=True)
    scaler.scale(criterion(model(x), y)).backward()
    scaler.step(optimizer)
    scaler.update()
""",
        """\
for x, y in loader:
    model.zero_grad()
    loss_fn(model(x), y).backward()
    opt.step()
""",
        """\
for x, y in loader:
    for p in model.parameters():
        p.grad = None
    loss_fn(model(x), y).backward()
    opt.step()
""",
        # accumulate over the whole epoch, one step after the loop
        """\
opt.zero_grad()
for x, y in loader:
    loss_fn(model(x), y).backward()
opt.step()
""",
        # step and clearing inside a helper defined in the same file
        """\
def update(opt):
    opt.step()
    opt.zero_grad()

for x, y in loader:
    loss_fn(model(x), y).backward()
    update(opt)
""",
        # Accelerate
        """\
for batch in loader:
    loss = model(**batch).loss
    accelerator.backward(loss)
    optimizer.step()
    optimizer.zero_grad()
""",
    ]
    INVALID = [
        Invalid(
            """\
import torch
model = torch.nn.Linear(4, 2)
optimizer = torch.optim.Adam(model.parameters())
for x, y in loader:
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
""",
            line=4,
            fixed="""\
import torch
model = torch.nn.Linear(4, 2)
optimizer = torch.optim.Adam(model.parameters())
for x, y in loader:
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
""",
        ),
        Invalid(
            """\
import torch
class Trainer:
    def __init__(self, model):
        self.model = model
        self.opt = torch.optim.AdamW(model.parameters())
    def fit(self):
        for epoch in range(10):
            for batch in self.loader:
                self.model(batch).sum().backward()
                self.opt.step()
""",
            line=8,
            fixed="""\
import torch
class Trainer:
    def __init__(self, model):
        self.model = model
        self.opt = torch.optim.AdamW(model.parameters())
    def fit(self):
        for epoch in range(10):
            for batch in self.loader:
                self.opt.zero_grad()
                self.model(batch).sum().backward()
                self.opt.step()
""",
        ),
        # `scaler.step(opt)` with an `opt` of unknown kind: reported, but no `opt.zero_grad()` is offered
        Invalid(
            """\
import torch
scaler = torch.amp.GradScaler("cuda")
def train(model, opt, loader):
    for x, y in loader:
        scaler.scale(model(x).sum()).backward()
        scaler.step(opt)
        scaler.update()
""",
            line=4,
        ),
        # two optimizers, only one of them cleared
        Invalid(
            """\
import torch
opt_d = torch.optim.Adam(disc.parameters())
opt_g = torch.optim.Adam(gen.parameters())
for real in loader:
    opt_d.zero_grad()
    d_loss(real).backward()
    opt_d.step()
    g_loss().backward()
    opt_g.step()
""",
            line=4,
            fixed="""\
import torch
opt_d = torch.optim.Adam(disc.parameters())
opt_g = torch.optim.Adam(gen.parameters())
for real in loader:
    opt_g.zero_grad()
    opt_d.zero_grad()
    d_loss(real).backward()
    opt_d.step()
    g_loss().backward()
    opt_g.step()
""",
        ),
    ]

    def _check(self, loop: Loop, events: list[Event]) -> None:
        steps = [e for e in events if e.kind is EventKind.STEP]
        backs = [e for e in events if e.kind is EventKind.BACKWARD]
        if not steps or not backs:
            return
        # Report the innermost loop only: a nested loop that steps is the training loop.
        if any(e.depth > 0 for e in steps) and any(e.depth > 0 for e in backs):
            return
        step = self._uncleared(steps, [e for e in events if e.kind is EventKind.ZERO_GRAD])
        if step is None:
            return
        opt = dotted_or(step.target, "optimizer")
        first = self._first(loop)
        # the inserted call relies on `opt` being an optimizer (a custom object may have no zero_grad)
        proven = step.via is None and step.target is not None and bool(self.ctx.kind(step.target) & Kind.OPTIMIZER)
        edit = (
            fix(
                f"Insert `{opt}.zero_grad()` at the start of the loop body",
                InsertBefore(first, f"{opt}.zero_grad()"),
                applicability=SAFE,
            )
            if first is not None and proven
            else None
        )
        self.report(loop, self.message.format(opt=opt), fix=edit)

    def _uncleared(self, steps: list[Event], clears: list[Event]) -> Event | None:
        if not clears:
            return steps[0]
        # Clearing through a model, a parameter or an unknown object may cover any optimizer;
        # only when every clear names an optimizer can we tell which ones are never cleared.
        cleared = set()
        for c in clears:
            name = dotted(c.target) if isinstance(c.node, cst.Call) and c.target is not None else None
            if c.target is None or name is None or not self.ctx.kind(c.target) & Kind.OPTIMIZER:
                return None
            cleared.add(name)
        stepped = {dotted(s.target) for s in steps if s.target is not None}
        if len(stepped) < 2 or not stepped & cleared:
            return None  # one optimizer under two names (`opt = self.opt`) is not a bug
        for s in steps:
            name = dotted(s.target) if s.target is not None else None
            if (
                s.target is not None
                and s.via is None
                and name
                and name not in cleared
                and self.ctx.kind(s.target) & Kind.OPTIMIZER
            ):
                return s
        return None
