"""Training-loop rules (TL101-TL104, TL111, TL114): what one iteration does, in which order.

Every rule here reads the ordered events of a loop iteration from
`ctx.loop_analysis` (engine/flow.py); none walks the loop itself.
"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.kinds import Kind
from torchlint.engine.loop_events import Event, EventKind, dominates, exclusive
from torchlint.engine.names import dotted
from torchlint.engine.rule import InsertAfter, InsertBefore, Invalid, RemoveStatement, Rule, fix
from torchlint.engine.walk import block_statements
from torchlint.findings import Severity


class _LoopRule(Rule):
    """Shared plumbing: run `_check` on every loop with its events."""

    def visit_For(self, node: cst.For) -> None:
        self._check(node, self.ctx.loop_analysis.events(node))

    def visit_While(self, node: cst.While) -> None:
        self._check(node, self.ctx.loop_analysis.events(node))

    def _check(self, loop, events: list[Event]) -> None:
        raise NotImplementedError

    def _code(self, node: cst.CSTNode) -> str:
        return self.ctx.module.code_for_node(node)

    def _first(self, loop) -> cst.BaseStatement | None:
        """The loop body's first statement, when the body is an indented block."""
        return block_statements(loop.body)[0] if isinstance(loop.body, cst.IndentedBlock) else None


def _name(expr: cst.BaseExpression | None, default: str) -> str:
    return (dotted(expr) if expr is not None else None) or default


def _same_target(a: Event, b: Event) -> bool:
    na, nb = _name(a.target, ""), _name(b.target, "")
    return not na or not nb or na == nb


class MissingZeroGrad(_LoopRule):
    code = "TL101"
    requires = ("backward",)
    name = "missing-zero-grad"
    message = "gradients are never cleared in this training loop: `{opt}.step()` applies gradients accumulated over every previous step"
    severity = Severity.ERROR
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
class Trainer:
    def fit(self):
        for epoch in range(10):
            for batch in self.loader:
                self.model(batch).sum().backward()
                self.opt.step()
""",
            line=4,
        ),
        # two optimizers, only one of them cleared
        Invalid(
            """\
for real in loader:
    opt_d.zero_grad()
    d_loss(real).backward()
    opt_d.step()
    g_loss().backward()
    opt_g.step()
""",
            line=1,
        ),
    ]

    def _check(self, loop, events) -> None:
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
        opt = _name(step.target, "optimizer")
        first = self._first(loop)
        edit = fix(
            f"Insert `{opt}.zero_grad()` at the start of the loop body", InsertBefore(first, f"{opt}.zero_grad()")
        )
        self.report(loop, self.message.format(opt=opt), fix=edit if first is not None else None)

    def _uncleared(self, steps: list[Event], clears: list[Event]) -> Event | None:
        if not clears:
            return steps[0]
        # Clearing through a model, a parameter or an unknown object may cover any optimizer;
        # only when every clear names an optimizer can we tell which ones are never cleared.
        cleared = set()
        for c in clears:
            name = dotted(c.target) if isinstance(c.node, cst.Call) and c.target is not None else None
            if name is None or not self.ctx.kind(c.target) & Kind.OPTIMIZER:
                return None
            cleared.add(name)
        stepped = {dotted(s.target) for s in steps if s.target is not None}
        if len(stepped) < 2 or not stepped & cleared:
            return None  # one optimizer under two names (`opt = self.opt`) is not a bug
        for s in steps:
            name = dotted(s.target) if s.target is not None else None
            if s.via is None and name and name not in cleared and self.ctx.kind(s.target) & Kind.OPTIMIZER:
                return s
        return None


class ZeroGradBetweenBackwardAndStep(_LoopRule):
    code = "TL102"
    requires = ("backward",)
    name = "zero-grad-between-backward-and-step"
    message = "`{call}` runs after `backward()` and before `{step}`: the step applies zero gradients and the model does not learn"
    severity = Severity.ERROR
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
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.zero_grad()
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
class Trainer:
    def train_step(self, batch):
        for x, y in batch:
            self.loss_fn(self.model(x), y).backward()
            self.model.zero_grad()
            self.scaler.step(self.optimizer)
            self.scaler.update()
""",
            line=5,
        ),
    ]

    def _check(self, loop, events) -> None:
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
                    and _name(e.target, "") == _name(z.target, "?")
                    for e in events[:i]
                )
                edits = (RemoveStatement(z.stmt),) if already else (InsertBefore(first, call), RemoveStatement(z.stmt))
                edit = fix("Move the `zero_grad()` call to the start of the loop body", *edits)
            self.report(z.node, self.message.format(call=call, step=self._code(step.node)), fix=edit)

    def _next_step(self, after: list[Event], z: Event, steps) -> Event | None:
        for e in after:
            if e.kind is EventKind.BACKWARD and not exclusive(e, z):
                return None  # gradients are recomputed before the step
            if e in steps and e.depth == 0 and dominates(z, e) and self._clears(z, e, steps):
                return e
        return None

    def _clears(self, z: Event, step: Event, steps) -> bool:
        if self.ctx.kind(z.target) & Kind.OPTIMIZER:
            return _name(z.target, "") == _name(step.target, "?")
        # model.zero_grad(): only when one optimizer is stepped, so it must be that model's
        return len({_name(s.target, "") for s in steps}) == 1


class StepBeforeBackward(_LoopRule):
    code = "TL103"
    requires = ("backward",)
    name = "step-before-backward"
    message = (
        "`{step}` runs before `backward()` in this iteration: it applies the previous iteration's gradients (or none)"
    )
    severity = Severity.ERROR
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
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    optimizer.step()
    loss.backward()
"""
    fix_example = """\
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

    def _check(self, loop, events) -> None:
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
            if any(e.kind is EventKind.STEP and _same_target(e, s) for e in after):
                continue
            edit = None
            receiver = s.node.func.value if isinstance(s.node.func, cst.Attribute) else None
            if s.movable and back.top is not s.top and receiver is s.target:
                edit = fix(
                    f"Move `{self._code(s.node)}` after the backward pass",
                    RemoveStatement(s.stmt),
                    InsertAfter(back.top, self._code(s.node)),
                )
            self.report(s.node, self.message.format(step=self._code(s.node)), fix=edit)


class SchedulerStepBeforeOptimizerStep(_LoopRule):
    code = "TL104"
    requires = ("step",)
    name = "scheduler-step-before-optimizer-step"
    message = "`{sched}` runs before the first `optimizer.step()` of the iteration: the first learning rate is skipped"
    severity = Severity.WARNING
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
for epoch in range(epochs):
    scheduler.step()
    for x, y in loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
"""
    fix_example = """\
for epoch in range(epochs):
    for x, y in loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
    scheduler.step()
"""
    fix_safety = (
        "Moves the scheduler step after the statement holding the iteration's last `optimizer.step()`. "
        "The schedule then starts one step later, as PyTorch documents; a schedule tuned around the old "
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

    def _check(self, loop, events) -> None:
        steps = [e for e in events if e.kind is EventKind.STEP]
        if not steps:
            return
        first = events.index(steps[0])
        for sched in events[:first]:
            if sched.kind is not EventKind.SCHED_STEP or sched.depth or sched.node.args:
                continue
            if not any(dominates(sched, s) for s in steps):
                continue
            code = self._code(sched.node)
            edit = None
            last_top = steps[-1].top
            if sched.movable and last_top is not sched.top:
                edit = fix(
                    f"Move `{code}` after the optimizer step", RemoveStatement(sched.stmt), InsertAfter(last_top, code)
                )
            self.report(sched.node, self.message.format(sched=code), fix=edit)


class TrainModeNotRestored(_LoopRule):
    code = "TL111"
    requires = ("eval", "train(False)")
    name = "train-mode-not-restored"
    message = "`{model}.eval()` is never undone: from the second epoch on, `{model}` trains in eval mode (dropout off, batch-norm statistics frozen)"
    severity = Severity.ERROR
    summary = "model.eval() inside the epoch loop with no model.train() before the next training pass"
    what = (
        "Flags `model.eval()` (or `model.train(False)`) inside a loop that also trains, when no "
        "`model.train()` runs between it and the next iteration's `backward()`."
    )
    why = (
        "`eval()` switches dropout off and makes batch-norm use its running statistics. A validation "
        "pass at the end of the first epoch leaves the model in that mode, so every later epoch trains "
        "without dropout and with frozen batch-norm statistics: accuracy quietly drops and no error is "
        "raised. `model.train()` at the start of each epoch prevents it."
    )
    example = """\
model.train()
for epoch in range(epochs):
    for x, y in train_loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        accuracy = evaluate(model, val_loader)
"""
    fix_example = """\
for epoch in range(epochs):
    model.train()
    for x, y in train_loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        accuracy = evaluate(model, val_loader)
"""
    fix_safety = "Inserts `model.train()` as the first statement of the epoch loop. Safe."
    VALID = [
        """\
for epoch in range(epochs):
    model.train()
    for x, y in train_loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
    model.eval()
""",
        # the validation helper restores train mode itself
        """\
def validate(model, loader):
    model.eval()
    with torch.no_grad():
        for x, y in loader:
            model(x)
    model.train()

for epoch in range(epochs):
    for x, y in train_loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
    validate(model, val_loader)
""",
        # a frozen teacher stays in eval mode on purpose
        """\
for x, y in train_loader:
    teacher.eval()
    optimizer.zero_grad()
    criterion(model(x), teacher(x)).backward()
    optimizer.step()
""",
    ]
    INVALID = [
        Invalid(
            """\
import torch
model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.5))
model.train()
for epoch in range(10):
    for x, y in train_loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        print(model(val_x))
""",
            line=9,
            fixed="""\
import torch
model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.5))
model.train()
for epoch in range(10):
    model.train()
    for x, y in train_loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        print(model(val_x))
""",
        ),
    ]

    _FROZEN = ("ema", "teacher", "frozen", "target", "ref", "pretrained", "reward", "old")

    def _check(self, loop, events) -> None:
        if not any(e.kind is EventKind.BACKWARD for e in events):
            return
        for i, ev in enumerate(events):
            if ev.kind is not EventKind.EVAL or ev.depth:
                continue
            model = _name(ev.target, "model")
            if any(part in model.lower() for part in self._FROZEN):
                continue
            cycle = events[i + 1 :] + events[:i]
            restored = False
            for e in cycle:
                if e.kind is EventKind.TRAIN and _same_target(e, ev):
                    restored = True
                    break
                if e.kind is EventKind.BACKWARD:
                    break
            if restored:
                continue
            first = self._first(loop)
            edit = None
            if ev.via is None and first is not None:
                edit = fix(
                    f"Insert `{model}.train()` at the start of the loop body", InsertBefore(first, f"{model}.train()")
                )
            self.report(ev.node, self.message.format(model=model), fix=edit)


class EmptyCacheInLoop(_LoopRule):
    code = "TL114"
    requires = ("empty_cache",)
    name = "empty-cache-in-loop"
    message = "`torch.cuda.empty_cache()` in the training loop synchronizes and slows every step, and frees nothing PyTorch would not reuse"
    severity = Severity.WARNING
    summary = "torch.cuda.empty_cache() called inside a training loop"
    what = (
        "Flags `torch.cuda.empty_cache()` called at the level of a training loop's steps (not inside "
        "an `except` handler that recovers from an out-of-memory error)."
    )
    why = (
        "The caching allocator keeps freed blocks to reuse them in the next step. `empty_cache()` "
        "returns them to the driver, forcing a device synchronization now and fresh `cudaMalloc` calls "
        "in the next step — often 10-30% slower. It does not lower peak memory or fix fragmentation "
        "(`PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` does)."
    )
    example = """\
import torch

for x, y in loader:
    optimizer.zero_grad()
    criterion(model(x), y).backward()
    optimizer.step()
    torch.cuda.empty_cache()
"""
    fix_example = """\
import torch

for x, y in loader:
    optimizer.zero_grad()
    criterion(model(x), y).backward()
    optimizer.step()
"""
    fix_safety = (
        "Removes the call. Safe for correctness; only memory shown by `nvidia-smi` changes (the cache "
        "stays reserved by this process)."
    )
    VALID = [
        """\
for x, y in loader:
    optimizer.zero_grad()
    criterion(model(x), y).backward()
    optimizer.step()
torch.cuda.empty_cache()
""",
        # out-of-memory recovery
        """\
for x, y in loader:
    try:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
    except torch.cuda.OutOfMemoryError:
        torch.cuda.empty_cache()
""",
        # evaluation loop, no training
        """\
for x in loader:
    preds.append(model(x))
    torch.cuda.empty_cache()
""",
    ]
    INVALID = [
        Invalid(
            """\
import torch
for x, y in loader:
    optimizer.zero_grad()
    criterion(model(x), y).backward()
    optimizer.step()
    torch.cuda.empty_cache()
""",
            line=6,
            fixed="""\
import torch
for x, y in loader:
    optimizer.zero_grad()
    criterion(model(x), y).backward()
    optimizer.step()
""",
        ),
    ]

    def _check(self, loop, events) -> None:
        if not any(e.kind in (EventKind.BACKWARD, EventKind.STEP) and e.depth == 0 for e in events):
            return
        for e in events:
            if e.kind is EventKind.EMPTY_CACHE and e.depth == 0 and not e.in_handler:
                edit = fix("Remove the call", RemoveStatement(e.stmt)) if e.movable and not e.alone else None
                self.report(e.node, fix=edit)
