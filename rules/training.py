"""Training-loop rules (TL1xx): the order of zero_grad, backward and step."""

from __future__ import annotations

import libcst as cst

from torchlint.engine.flow import Ev
from torchlint.engine.names import dotted
from torchlint.engine.rule import Invalid, InsertBefore, Rule, fix
from torchlint.engine.walk import block_statements
from torchlint.model import Severity


class MissingZeroGrad(Rule):
    code = "TL101"
    name = "missing-zero-grad"
    message = "gradients are never cleared in this training loop: `{opt}.step()` applies gradients accumulated over every previous step"
    severity = Severity.ERROR
    summary = "Training loop calls backward() and step() but never clears gradients"
    what = (
        "Flags a loop that calls `.backward()` and an optimizer's `step()` in each iteration but never "
        "clears gradients inside the loop (`optimizer.zero_grad()`, `model.zero_grad()`, "
        "`p.grad = None`)."
    )
    why = (
        "`backward()` adds into `.grad`; it does not overwrite it. Without clearing, every step applies "
        "the sum of all gradients computed so far, so the effective learning rate grows each iteration "
        "and training diverges or stalls — silently, with no error."
    )
    example = """\
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
"""
    fix_example = """\
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
"""
    fix_safety = (
        "Safe for ordinary training loops. If you meant to accumulate gradients across iterations, "
        "clear them after each `step()` instead (see the gradient-accumulation example) and ignore the fix."
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
class Trainer:
    def fit(self):
        for epoch in range(10):
            for batch in self.loader:
                self.model(batch).sum().backward()
                self.opt.step()
""",
            line=4,
        ),
    ]

    def visit_For(self, node: cst.CSTNode) -> None:
        self._check(node)

    def visit_While(self, node: cst.CSTNode) -> None:
        self._check(node)

    def _check(self, loop) -> None:
        loops = self.ctx.loop_analysis
        events = loops.events(loop)
        steps = [e for e in events if e.kind is Ev.STEP]
        if not steps or not any(e.kind is Ev.BACKWARD for e in events):
            return
        if any(e.kind is Ev.ZERO_GRAD for e in events):
            return
        # Report the innermost loop only: a nested loop that steps is the training loop.
        if any(e.depth > 0 for e in steps) and any(e.depth > 0 for e in events if e.kind is Ev.BACKWARD):
            return
        opt = dotted(steps[0].target) if steps[0].target is not None else None
        opt = opt or "optimizer"
        body = block_statements(loop.body)
        edit = fix(f"Insert `{opt}.zero_grad()` at the start of the loop body", InsertBefore(body[0], f"{opt}.zero_grad()"))
        self.report(loop, self.message.format(opt=opt), fix=edit if isinstance(loop.body, cst.IndentedBlock) else None)
