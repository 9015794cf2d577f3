"""TL112 gradscaler-bypassed: scaled gradients stepped directly, or a GradScaler never updated"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.flow.blocks import Loop
from torchlint.engine.flow.loop_events import Event, EventKind
from torchlint.engine.rule import SAFE, UNSAFE, InsertAfter, Invalid, Replace, fix
from torchlint.engine.semantic.kinds import Kind
from torchlint.findings import Severity

from ._helpers import LoopRule, scaler_of


class GradscalerBypassed(LoopRule):
    code = "TL112"
    analyses = frozenset(
        {
            Analysis.CALL_SITES,
            Analysis.GRAPH_BODIES,
            Analysis.KINDS,
            Analysis.LOCAL_FUNCTIONS,
            Analysis.LOOP_ANALYSIS,
            Analysis.OWN_SUMMARY,
            Analysis.SCOPES,
        }
    )
    requires = ("scale",)
    name = "gradscaler-bypassed"
    message = "{problem}"
    severity = Severity.ERROR
    category = "correctness"
    summary = (
        "after `scaler.scale(loss).backward()`: `opt.step()` instead of `scaler.step(opt)`, or no `scaler.update()`"
    )
    what = (
        "In a loop that steps an optimizer and whose every backward (inner gradient-accumulation loops "
        "included) is `scaler.scale(loss).backward()` on a proven `GradScaler` (not one built with "
        "`enabled=False`), flags:\n\n"
        "- an optimizer stepped directly (`opt.step()` instead of `scaler.step(opt)`) when the loop never "
        "calls `scaler.unscale_(opt)`;\n"
        "- a loop that never calls `scaler.update()` (one level into functions of the same file counts)."
    )
    why = (
        "`scaler.scale(loss)` multiplies the loss — and so every gradient — by the loss scale (65536 at the "
        "start). `scaler.step(opt)` divides it back out and skips the step when a gradient overflowed; "
        "`opt.step()` applies gradients 65536 times too large, and the following `scaler.update()` fails "
        "(`No inf checks were recorded for this optimizer`). Without `scaler.update()` the scale never "
        "adapts, and a second `scaler.step()` raises `step() has already been called since the last update()`."
    )
    example = """\
import torch

scaler = torch.amp.GradScaler("cuda")
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    with torch.autocast("cuda"):
        loss = criterion(model(x), y)
    optimizer.zero_grad()
    scaler.scale(loss).backward()
    optimizer.step()
    scaler.update()
"""
    fix_example = """\
import torch

scaler = torch.amp.GradScaler("cuda")
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    with torch.autocast("cuda"):
        loss = criterion(model(x), y)
    optimizer.zero_grad()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
"""
    fix_safety = (
        "`opt.step()` → `scaler.step(opt)` is safe when the loop calls `scaler.update()`, unsafe otherwise "
        "(a second `scaler.step()` without an update raises; the missing update is reported too). Inserting "
        "`scaler.update()` after the loop's one optimizer step is safe: it is what the AMP recipe does."
    )
    VALID = [
        """\
import torch
scaler = torch.amp.GradScaler("cuda")
opt = torch.optim.SGD(params, lr=0.1)
for x, y in loader:
    scaler.scale(loss_fn(x, y)).backward()
    scaler.step(opt)
    scaler.update()
    opt.zero_grad()
""",
        # unscaled on purpose, then stepped: gradients have their true size
        """\
import torch
scaler = torch.amp.GradScaler("cuda")
opt = torch.optim.SGD(params, lr=0.1)
for x, y in loader:
    scaler.scale(loss_fn(x, y)).backward()
    scaler.unscale_(opt)
    scaler.step(opt)
    scaler.update()
""",
        # a disabled scaler passes everything through
        """\
import torch
scaler = torch.amp.GradScaler("cuda", enabled=False)
opt = torch.optim.SGD(params, lr=0.1)
for x, y in loader:
    scaler.scale(loss_fn(x, y)).backward()
    opt.step()
""",
        # no scaler at all
        "import torch\nopt = torch.optim.SGD(params, lr=0.1)\nfor x, y in loader:\n    loss_fn(x, y).backward()\n    opt.step()\n",
    ]
    INVALID = [
        Invalid(
            """\
import torch
scaler = torch.amp.GradScaler("cuda")
opt = torch.optim.AdamW(params)
for x, y in loader:
    scaler.scale(loss_fn(x, y)).backward()
    opt.step()
    scaler.update()
""",
            line=6,
            fixed="""\
import torch
scaler = torch.amp.GradScaler("cuda")
opt = torch.optim.AdamW(params)
for x, y in loader:
    scaler.scale(loss_fn(x, y)).backward()
    scaler.step(opt)
    scaler.update()
""",
        ),
        Invalid(
            """\
import torch
scaler = torch.cuda.amp.GradScaler()
opt = torch.optim.AdamW(params)
for step, (x, y) in enumerate(loader):
    scaler.scale(loss_fn(x, y)).backward()
    if (step + 1) % 4 == 0:
        scaler.step(opt)
        opt.zero_grad()
""",
            line=5,
            fixed="""\
import torch
scaler = torch.cuda.amp.GradScaler()
opt = torch.optim.AdamW(params)
for step, (x, y) in enumerate(loader):
    scaler.scale(loss_fn(x, y)).backward()
    if (step + 1) % 4 == 0:
        scaler.step(opt)
        scaler.update()
        opt.zero_grad()
""",
        ),
    ]

    def _check(self, loop: Loop, events: list[Event]) -> None:
        steps = [e for e in events if e.kind is EventKind.STEP and e.depth == 0 and e.via is None]
        if not steps:
            return  # an inner gradient-accumulation loop: the loop around it steps and updates
        backwards = [e for e in events if e.kind is EventKind.BACKWARD]
        scalers = [scaler_of(self.ctx, e) for e in backwards]
        if not scalers or any(s is None for s in scalers):
            return  # an unscaled backward in the loop: another optimizer may be meant to step directly
        names = {self._code(s) for s in scalers if s is not None}
        if len(names) != 1:
            return
        scaler = names.pop()
        updated = any(e.kind is EventKind.SCALER_UPDATE for e in events)
        if not any(e.kind is EventKind.UNSCALE for e in events):
            for step in steps:
                if self._direct(step):
                    self._report_direct(step, scaler, updated)
        if not updated:
            edit = None
            if len(steps) == 1 and steps[0].stmt is not None:
                edit = fix(
                    f"Insert `{scaler}.update()` after the step",
                    InsertAfter(steps[0].stmt, f"{scaler}.update()"),
                    applicability=SAFE,
                )
            problem = (
                f"the loop never calls `{scaler}.update()`: the loss scale never adapts, and a second "
                f"`{scaler}.step()` raises RuntimeError (`step() has already been called since the last update()`)"
            )
            self.report(backwards[0].node, self.message.format(problem=problem), fix=edit)

    def _direct(self, step: Event) -> bool:
        """`opt.step()` on a proven optimizer (not `scaler.step(opt)`)."""
        node = step.node
        return (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and bool(self.ctx.kind(node.func.value) & Kind.OPTIMIZER)
        )

    def _report_direct(self, step: Event, scaler: str, updated: bool) -> None:
        opt = self._code(step.target) if step.target is not None else "optimizer"
        problem = (
            f"`{opt}.step()` after `{scaler}.scale(loss).backward()` bypasses the GradScaler: it applies gradients "
            f"multiplied by the loss scale and does not skip overflowed steps; use `{scaler}.step({opt})`"
        )
        edit = fix(
            f"Use `{scaler}.step({opt})`",
            Replace(step.node, f"{scaler}.step({opt})"),
            applicability=SAFE if updated else UNSAFE,
            risk="needs a `scaler.update()` per step",
        )
        self.report(step.node, self.message.format(problem=problem), fix=edit)
