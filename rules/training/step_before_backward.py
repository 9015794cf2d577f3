"""TL103 step-before-backward: optimizer.step() called before loss.backward() in the same iteration"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.flow.blocks import Loop
from torchlint.engine.flow.loop_events import Event, EventKind, dominates
from torchlint.engine.rule import SAFE, InsertAfter, Invalid, RemoveStatement, fix
from torchlint.findings import Severity

from ._helpers import LoopRule, same_target


class StepBeforeBackward(LoopRule):
    code = "TL103"
    analyses = frozenset(
        {Analysis.CALL_SITES, Analysis.LOCAL_FUNCTIONS, Analysis.LOOP_ANALYSIS, Analysis.OWN_SUMMARY, Analysis.SCOPES}
    )
    requires = ("backward",)
    name = "step-before-backward"
    message = (
        "`{step}` runs before `backward()` in this iteration: it applies the previous iteration's gradients (or none)"
    )
    severity = Severity.ERROR
    category = "correctness"
    summary = "optimizer.step() called before loss.backward() in the same iteration"
    what = (
        "Flags an optimizer `step()` that runs, in every iteration, before the iteration's `backward()` "
        "and with no backward earlier in the iteration."
    )
    why = (
        "`step()` uses whatever is in `.grad` when it runs. Before `backward()` that is the previous "
        "batch's gradients (or nothing on the first iteration, or zeros right after `zero_grad()`), so "
        "every update is one step stale or empty."
    )
    example = """\
import torch

model = torch.nn.Linear(8, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = torch.nn.CrossEntropyLoss()

for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    optimizer.step()
    loss.backward()
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
    fix_safety = "Moves the `step()` statement to just after the statement holding the `backward()` call. Safe."
    VALID = [
        """\
for x, y in loader:
    optimizer.zero_grad()
    criterion(model(x), y).backward()
    optimizer.step()
""",
        # GAN: each optimizer steps after its own backward
        """\
for real in loader:
    opt_d.zero_grad()
    d_loss(real).backward()
    opt_d.step()
    opt_g.zero_grad()
    g_loss().backward()
    opt_g.step()
""",
        # a step guarded to run from the second iteration on
        """\
for i, (x, y) in enumerate(loader):
    if i > 0:
        optimizer.step()
    optimizer.zero_grad()
    criterion(model(x), y).backward()
""",
    ]
    INVALID = [
        Invalid(
            """\
import torch
optimizer = torch.optim.AdamW(model.parameters())
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    optimizer.step()
    loss.backward()
""",
            line=6,
            fixed="""\
import torch
optimizer = torch.optim.AdamW(model.parameters())
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
""",
        ),
    ]

    def _check(self, loop: Loop, events: list[Event]) -> None:
        for i, s in enumerate(events):
            if s.kind is not EventKind.STEP or s.depth:
                continue
            if any(e.kind is EventKind.BACKWARD for e in events[:i]):
                return  # gradients of this iteration already exist
            later = events[i + 1 :]
            back = next((b for b in later if b.kind is EventKind.BACKWARD and b.depth == 0 and dominates(s, b)), None)
            if back is None:
                continue
            after = later[later.index(back) + 1 :]
            if any(e.kind is EventKind.STEP and same_target(e, s) for e in after):
                continue
            edit = None
            receiver = (
                s.node.func.value if isinstance(s.node, cst.Call) and isinstance(s.node.func, cst.Attribute) else None
            )
            if s.movable and back.top is not s.top and receiver is s.target:
                edit = fix(
                    f"Move `{self._code(s.node)}` after the backward pass",
                    RemoveStatement(s.movable),
                    InsertAfter(back.top, self._code(s.node)),
                    applicability=SAFE,
                )
            self.report(s.node, self.message.format(step=self._code(s.node)), fix=edit)
