"""TL111 train-mode-not-restored: model.eval() inside the epoch loop with no model.train() before the next training pass"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.core.walk import block_statements, small_statements
from torchlint.engine.flow.blocks import Loop
from torchlint.engine.flow.loop_events import Event, EventKind
from torchlint.engine.rule import SAFE, InsertBefore, Invalid, fix
from torchlint.engine.semantic.kinds import Kind
from torchlint.engine.semantic.names import dotted
from torchlint.engine.semantic.values import current_where
from torchlint.engine.torch.model_mode import mode_free
from torchlint.findings import Severity

from ._helpers import LoopRule, dotted_or, same_target


def _mode_chosen(ev: Event, backward: Event, events: list[Event]) -> bool:
    """An eval before the backward of the same iteration that is the training code's own choice of mode: made
    by the helper that runs the backward (`def train(...): model.eval()  # linear probe`), or on one arm of
    an `if` whose other arm calls `train()` (`if finetune: model.train() elif freeze: model.eval()`)."""
    if ev.via is not None and ev.via is backward.via:
        return True
    arms = dict(ev.path)
    return any(
        e.kind is EventKind.TRAIN and same_target(e, ev) and any(arms.get(node, arm) != arm for node, arm in e.path)
        for e in events
    )


class TrainModeNotRestored(LoopRule):
    code = "TL111"
    analyses = frozenset(
        {
            Analysis.CALL_SITES,
            Analysis.KINDS,
            Analysis.LOCAL_FUNCTIONS,
            Analysis.LOOP_ANALYSIS,
            Analysis.OWN_SUMMARY,
            Analysis.SCOPES,
            Analysis.VALUES,
        }
    )
    requires = ("eval", "train(False)")
    name = "train-mode-not-restored"
    message = "`{model}.eval()` is never undone: from the second epoch on, `{model}` trains in eval mode (dropout off, batch-norm statistics frozen)"
    same_pass_message = "`{model}.eval()` is still in force at the `backward()` after it in the same iteration: `{model}` trains in eval mode (dropout off, batch-norm statistics frozen)"
    severity = Severity.ERROR
    category = "correctness"
    opt_in = (
        "On 12 public repositories it was not tuned on (bench/realworld, unseen at 2026-12-03), none of its 15 "
        "findings was right: 11 were models without dropout or batch-norm (now silent: eval mode changes nothing "
        "there) and 4 were linear probes that keep a frozen backbone in eval mode on purpose, every epoch (the "
        "2026-12-04 set added a fifth, barlowtwins' freeze mode; all five are silent now: an eval the training code "
        "makes before its own backward is a choice). The earlier measurement on other unseen code found 5 wrong "
        "findings where a helper switched the mode through a parameter (now followed). Fixed on those sets, not "
        "yet measured on fresh code. The fourth set (13 repositories, 2026-12-04) gave 2 findings, both wrong: "
        "a validation helper that runs `backward()` only when `loss.requires_grad`, called under `no_grad` between "
        "`eval()` and `train()` (now silent: with autograd off a backward trains nothing), and a frozen pretrained "
        "model evaluated after its patch's training loop. Select it to catch a forgotten `model.train()`."
    )
    summary = "model.eval() inside the epoch loop with no model.train() before the next training pass"
    what = (
        "Flags `model.eval()` (or `model.train(False)`) inside a loop that also trains, when no "
        "`model.train()` runs between it and the next iteration's `backward()`. An eval the training code "
        "makes itself before its backward is a choice, not a slip: in the helper that runs the backward (a "
        "linear probe's `train()` keeping a frozen backbone in eval mode), or on one arm of an `if` whose other "
        "arm calls `train()`; an eval another eval overrides before the backward is left to that one."
    )
    why = (
        "`eval()` switches dropout off and makes batch-norm use its running statistics. A validation "
        "pass at the end of the first epoch leaves the model in that mode, so every later epoch trains "
        "without dropout and with frozen batch-norm statistics: accuracy quietly drops and no error is "
        "raised. `model.train()` at the start of each epoch prevents it."
    )
    example = """\
import torch

model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Dropout(0.1), torch.nn.Linear(8, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = torch.nn.CrossEntropyLoss()

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
import torch

model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Dropout(0.1), torch.nn.Linear(8, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = torch.nn.CrossEntropyLoss()

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
        # the helper switches its parameter, the caller's `model`, which the epoch loop sets back
        """\
def accuracy(net, loader):
    net.eval()
    return sum((net(x).argmax(1) == y).sum().item() for x, y in loader)

for epoch in range(epochs):
    model.train()
    for x, y in train_loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
    print(accuracy(model, val_loader))
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
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
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
            line=10,
            fixed="""\
import torch
model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.5))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
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

    def _trained(self, model: str) -> bool:
        """Some optimizer of this file is given `model`'s parameters (`model.parameters()`)."""
        return any(
            isinstance(site.call.func, cst.Attribute)
            and site.call.func.attr.value in ("parameters", "named_parameters")
            and dotted(site.call.func.value) == model
            for site in self.ctx.call_sites.calls  # every call of the file
        )

    def _fresh_model_each_pass(self, loop: cst.For | cst.While) -> bool:
        """The loop body builds a new module each iteration: no mode carries over to the next one."""
        for stmt in block_statements(loop.body):
            for small in small_statements(stmt):
                if isinstance(small, cst.Assign) and self.ctx.kind(small.value) & Kind.MODEL:
                    return self._constructs(small.value)
        return False

    def _constructs(self, value: cst.BaseExpression) -> bool:
        """`Net(...)` or `Net(...).to(device)`: a constructor, not `model.to(device)` of an existing one."""
        while (
            isinstance(value, cst.Call)
            and isinstance(value.func, cst.Attribute)
            and isinstance(value.func.value, cst.Call)
        ):
            value = value.func.value
        return isinstance(value, cst.Call) and not (
            isinstance(value.func, cst.Attribute) and self.ctx.kind(value.func.value) & Kind.MODEL
        )

    def _check(self, loop: Loop, events: list[Event]) -> None:
        if not any(e.kind is EventKind.BACKWARD for e in events) or self._fresh_model_each_pass(loop):
            return
        for i, ev in enumerate(events):
            if ev.kind is not EventKind.EVAL or ev.depth:
                continue
            model = dotted_or(ev.target, "model")
            if ev.via is None and not self._trained(model):
                continue  # a teacher, an EMA copy, a frozen reference: kept in eval mode on purpose
            cycle = events[i + 1 :] + events[:i]
            stop = next(
                (
                    j
                    for j, e in enumerate(cycle)
                    if e.kind is EventKind.BACKWARD or (e.kind is EventKind.TRAIN and same_target(e, ev))
                ),
                None,
            )
            if stop is not None and cycle[stop].kind is EventKind.TRAIN:
                continue  # restored before the next backward
            if stop is not None and any(e.kind is EventKind.EVAL and same_target(e, ev) for e in cycle[:stop]):
                continue  # another eval sets the mode again before the backward: that one is judged
            if stop is not None and stop < len(events) - i - 1 and _mode_chosen(ev, cycle[stop], events):
                continue  # the training pass itself runs in eval mode, on purpose
            built = self.ctx.values.builder(ev.target, current_where(self.ctx)) if ev.target is not None else None
            if built is not None and mode_free(self.ctx, built[0]):
                continue  # no dropout or batch-norm: eval mode changes nothing
            same_pass = stop is not None and stop < len(events) - i - 1  # a backward after the eval, this iteration
            first = self._first(loop)
            edit = None
            if ev.via is None and first is not None and not same_pass:  # the start of the loop comes too late
                edit = fix(
                    f"Insert `{model}.train()` at the start of the loop body",
                    InsertBefore(first, f"{model}.train()"),
                    applicability=SAFE,
                )
            message = self.same_pass_message if same_pass else self.message
            self.report(ev.node, message.format(model=model), fix=edit)
