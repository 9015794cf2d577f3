"""TL114 empty-cache-in-loop: torch.cuda.empty_cache() called inside a training loop"""

from __future__ import annotations

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.flow.blocks import Loop
from torchlint.engine.flow.loop_events import Event, EventKind
from torchlint.engine.rule import SAFE, Invalid, RemoveStatement, fix
from torchlint.findings import Severity

from ._helpers import LoopRule


class EmptyCacheInLoop(LoopRule):
    code = "TL114"
    analyses = frozenset(
        {Analysis.CALL_SITES, Analysis.LOCAL_FUNCTIONS, Analysis.LOOP_ANALYSIS, Analysis.OWN_SUMMARY, Analysis.SCOPES}
    )
    requires = ("empty_cache",)
    name = "empty-cache-in-loop"
    message = "`torch.cuda.empty_cache()` in the training loop synchronizes and slows every step, and frees nothing PyTorch would not reuse"
    severity = Severity.WARNING
    category = "performance"
    summary = "torch.cuda.empty_cache() called inside a training loop"
    what = (
        "Flags `torch.cuda.empty_cache()` called at the level of a training loop's steps, every step: not "
        "behind a condition (`if step % 100 == 0:`, a flag), also when it runs in a helper the loop calls, "
        "and not inside an `except` handler that recovers from an out-of-memory error."
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
        # a validation helper run every 100 steps
        """\
import torch
def validate(model):
    model(val_x)
    torch.cuda.empty_cache()
for step, (x, y) in enumerate(loader):
    optimizer.zero_grad()
    criterion(model(x), y).backward()
    optimizer.step()
    if step % 100 == 0:
        validate(model)
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

    def _check(self, loop: Loop, events: list[Event]) -> None:
        if not any(e.kind in (EventKind.BACKWARD, EventKind.STEP) and e.depth == 0 for e in events):
            return
        if self.ctx.loop_analysis.builds_its_model(loop):
            return  # each iteration is a run with a new model: the cache is emptied once per run
        for e in events:
            if e.kind is EventKind.EMPTY_CACHE and e.depth == 0 and e.every_iteration:
                edit = (
                    fix("Remove the call", RemoveStatement(e.movable), applicability=SAFE)
                    if e.movable and not e.alone
                    else None
                )
                self.report(e.node, fix=edit)
