"""TL104 scheduler-step-before-optimizer-step: lr_scheduler.step() called before optimizer.step()"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.flow.blocks import Loop
from torchlint.engine.flow.loop_events import Event, EventKind, dominates
from torchlint.engine.rule import UNSAFE, InsertAfter, Invalid, RemoveStatement, fix
from torchlint.findings import Severity

from ._helpers import LoopRule


class SchedulerStepBeforeOptimizerStep(LoopRule):
    code = "TL104"
    analyses = frozenset(
        {Analysis.CALL_SITES, Analysis.LOCAL_FUNCTIONS, Analysis.LOOP_ANALYSIS, Analysis.OWN_SUMMARY, Analysis.SCOPES}
    )
    requires = ("step",)
    name = "scheduler-step-before-optimizer-step"
    message = "`{sched}` runs before the first `optimizer.step()` of the iteration: the first learning rate is skipped"
    severity = Severity.WARNING
    category = "correctness"
    summary = "lr_scheduler.step() called before optimizer.step()"
    what = (
        "Flags a learning-rate scheduler's `step()` that runs at the start of an epoch or iteration, "
        "before that iteration's first `optimizer.step()`."
    )
    why = (
        "Since PyTorch 1.1 the scheduler must step after the optimizer. Stepping it first skips the "
        "first value of the schedule (the warm-up's first learning rate, or a whole epoch of the base "
        "rate), and PyTorch warns at run time: `Detected call of lr_scheduler.step() before "
        "optimizer.step()`."
    )
    example = """\
import torch

model = torch.nn.Linear(8, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = torch.nn.CrossEntropyLoss()
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=30)

for epoch in range(epochs):
    scheduler.step()
    for x, y in loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
"""
    fix_example = """\
import torch

model = torch.nn.Linear(8, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = torch.nn.CrossEntropyLoss()
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=30)

for epoch in range(epochs):
    for x, y in loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
    scheduler.step()
"""
    fix_safety = (
        "Unsafe: moves the scheduler step after the statement holding the iteration's last "
        "`optimizer.step()`. The schedule then starts one step later, as PyTorch documents, so every "
        "step trains with a different learning rate than before; a schedule tuned around the old "
        "off-by-one shifts by one step."
    )
    VALID = [
        """\
for epoch in range(epochs):
    for x, y in loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
    scheduler.step()
""",
        # ReduceLROnPlateau takes the metric; stepping it first is the documented use
        """\
for epoch in range(epochs):
    scheduler.step(val_loss)
    for x, y in loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
""",
        # from the second epoch on, the previous epoch's optimizer steps came first
        """\
for epoch in range(epochs):
    if epoch > 0:
        scheduler.step()
    for x, y in loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
""",
    ]
    INVALID = [
        Invalid(
            """\
import torch
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 30)
for x, y in loader:
    scheduler.step()
    optimizer.zero_grad()
    criterion(model(x), y).backward()
    optimizer.step()
""",
            line=5,
            fixed="""\
import torch
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 30)
for x, y in loader:
    optimizer.zero_grad()
    criterion(model(x), y).backward()
    optimizer.step()
    scheduler.step()
""",
        ),
    ]

    def _check(self, loop: Loop, events: list[Event]) -> None:
        steps = [e for e in events if e.kind is EventKind.STEP]
        if not steps:
            return
        first = events.index(steps[0])
        for sched in events[:first]:
            if (
                sched.kind is not EventKind.SCHED_STEP
                or sched.depth
                or not isinstance(sched.node, cst.Call)
                or sched.node.args
            ):
                continue
            if not any(dominates(sched, s) for s in steps):
                continue
            code = self._code(sched.node)
            edit = None
            last_top = steps[-1].top
            if sched.movable and last_top is not sched.top:
                edit = fix(
                    f"Move `{code}` after the optimizer step",
                    RemoveStatement(sched.movable),
                    InsertAfter(last_top, code),
                    applicability=UNSAFE,
                    risk="shifts the learning-rate schedule by one step",
                )
            self.report(sched.node, self.message.format(sched=code), fix=edit)
