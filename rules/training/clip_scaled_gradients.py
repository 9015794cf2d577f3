"""TL108 clip-scaled-gradients: clipping after `scaler.scale(loss).backward()` without `scaler.unscale_`"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.flow.blocks import Loop
from torchlint.engine.flow.loop_events import Event, EventKind, dominates
from torchlint.engine.rule import SAFE, UNSAFE, InsertBefore, Invalid, fix
from torchlint.findings import Severity

from ._helpers import LoopRule, scaler_of


class ClipScaledGradients(LoopRule):
    code = "TL108"
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
    requires = ("clip_grad",)
    name = "clip-scaled-gradients"
    message = (
        "`{clip}` clips gradients still multiplied by `{scaler}`'s loss scale (65536 at the start), so the "
        "threshold means nothing; call `{scaler}.unscale_({opt})` before it"
    )
    severity = Severity.ERROR
    category = "correctness"
    summary = (
        "`clip_grad_norm_`/`clip_grad_value_` after `scaler.scale(loss).backward()` with no `scaler.unscale_(opt)`"
    )
    what = (
        "Flags `torch.nn.utils.clip_grad_norm_` / `clip_grad_value_` directly in a loop after "
        "`scaler.scale(loss).backward()` on a proven `GradScaler` (not one built with `enabled=False`) — "
        "the backward may sit in an inner gradient-accumulation loop — when no `scaler.unscale_(...)` runs "
        "between them on every path to the clip. Silent without a scaler, with `unscale_` before the clip "
        "(also inside the same `if`), and for library clipping that unscales itself "
        "(`accelerator.clip_grad_norm_`)."
    )
    why = (
        "`scaler.scale(loss).backward()` leaves every gradient multiplied by the loss scale (2**16 by "
        "default, and changing as the scaler adapts). A norm threshold such as `max_norm=1.0` applied to "
        "those gradients clips nearly every step by a varying factor, and `clip_grad_value_` bounds the "
        "wrong quantity. `scaler.unscale_(optimizer)` divides the scale out first; `scaler.step` then "
        "knows not to do it twice."
    )
    example = """\
import torch

scaler = torch.amp.GradScaler("cuda")
optimizer = torch.optim.AdamW(model.parameters())
for x, y in loader:
    scaler.scale(criterion(model(x), y)).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad()
"""
    fix_example = """\
import torch

scaler = torch.amp.GradScaler("cuda")
optimizer = torch.optim.AdamW(model.parameters())
for x, y in loader:
    scaler.scale(criterion(model(x), y)).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad()
"""
    fix_safety = (
        "Inserting `scaler.unscale_(opt)` before the clip is safe when the clip runs exactly when the "
        "optimizer steps (same branch), the AMP recipe. Unsafe when they sit on different branches (a clip "
        "every micro-step of gradient accumulation): unscaling mid-accumulation mixes scaled and unscaled "
        "gradients, and a second `unscale_` before `update()` raises. Not offered when the loop steps more "
        "than one optimizer or already calls `unscale_` somewhere."
    )
    VALID = [
        """\
import torch
scaler = torch.amp.GradScaler("cuda")
opt = torch.optim.SGD(params, lr=0.1)
for x in loader:
    scaler.scale(f(x)).backward()
    if clip:
        scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(params, 1.0)
    scaler.step(opt)
    scaler.update()
""",
        # no scaler
        """\
import torch
opt = torch.optim.SGD(params, lr=0.1)
for x in loader:
    f(x).backward()
    torch.nn.utils.clip_grad_norm_(params, 1.0)
    opt.step()
""",
        # a disabled scaler
        """\
import torch
scaler = torch.amp.GradScaler("cuda", enabled=False)
opt = torch.optim.SGD(params, lr=0.1)
for x in loader:
    scaler.scale(f(x)).backward()
    torch.nn.utils.clip_grad_value_(params, 0.5)
    scaler.step(opt)
    scaler.update()
""",
    ]
    INVALID = [
        Invalid(
            """\
import torch
from torch.nn.utils import clip_grad_norm_
scaler = torch.amp.GradScaler("cuda")
opt = torch.optim.SGD(params, lr=0.1)
for x in loader:
    scaler.scale(f(x)).backward()
    clip_grad_norm_(params, 1.0)
    scaler.step(opt)
    scaler.update()
""",
            line=7,
            fixed="""\
import torch
from torch.nn.utils import clip_grad_norm_
scaler = torch.amp.GradScaler("cuda")
opt = torch.optim.SGD(params, lr=0.1)
for x in loader:
    scaler.scale(f(x)).backward()
    scaler.unscale_(opt)
    clip_grad_norm_(params, 1.0)
    scaler.step(opt)
    scaler.update()
""",
        ),
        # unscaled only on one branch
        Invalid(
            """\
import torch
scaler = torch.amp.GradScaler("cuda")
opt = torch.optim.SGD(params, lr=0.1)
for x in loader:
    scaler.scale(f(x)).backward()
    if log_norms:
        scaler.unscale_(opt)
    torch.nn.utils.clip_grad_norm_(params, 1.0)
    scaler.step(opt)
    scaler.update()
""",
            line=8,
        ),
        # clipping every micro-step of an accumulation: unsafe to unscale there
        Invalid(
            """\
import torch
scaler = torch.amp.GradScaler("cuda")
opt = torch.optim.SGD(params, lr=0.1)
for i, x in enumerate(loader):
    scaler.scale(f(x)).backward()
    torch.nn.utils.clip_grad_norm_(params, 1.0)
    if i % 4 == 3:
        scaler.step(opt)
        scaler.update()
""",
            line=6,
            fixed="""\
import torch
scaler = torch.amp.GradScaler("cuda")
opt = torch.optim.SGD(params, lr=0.1)
for i, x in enumerate(loader):
    scaler.scale(f(x)).backward()
    scaler.unscale_(opt)
    torch.nn.utils.clip_grad_norm_(params, 1.0)
    if i % 4 == 3:
        scaler.step(opt)
        scaler.update()
""",
        ),
    ]

    def _check(self, loop: Loop, events: list[Event]) -> None:
        backwards = [(i, e) for i, e in enumerate(events) if e.kind is EventKind.BACKWARD]
        scalers = [scaler_of(self.ctx, e) for _, e in backwards]
        if not scalers or any(s is None for s in scalers):
            return  # no scaler, or an unscaled backward the clip may belong to
        names = {self._code(s) for s in scalers if s is not None}
        if len(names) != 1:
            return
        scaler = names.pop()
        first = backwards[0][0]
        unscales = [(i, e) for i, e in enumerate(events) if e.kind is EventKind.UNSCALE]
        steps = [e for e in events if e.kind is EventKind.STEP and e.depth == 0 and e.via is None]
        optimizers = {self._code(e.target) for e in steps if e.target is not None}
        for i, clip in enumerate(events):
            if clip.kind is not EventKind.CLIP or clip.depth or i < first or not isinstance(clip.node, cst.Call):
                continue
            if any(first < j < i and dominates(u, clip) for j, u in unscales):
                continue
            opt = next(iter(optimizers)) if len(optimizers) == 1 else "optimizer"
            edit = None
            if len(optimizers) == 1 and not unscales and clip.via is None and clip.stmt is not None:
                together = any(s.path == clip.path for s in steps)
                edit = fix(
                    f"Insert `{scaler}.unscale_({opt})` before the clip",
                    InsertBefore(clip.stmt, f"{scaler}.unscale_({opt})"),
                    applicability=SAFE if together else UNSAFE,
                    risk="may unscale gradients mid-accumulation",
                )
            message = self.message.format(clip=self._code(clip.node.func), scaler=scaler, opt=opt)
            self.report(clip.node, message, fix=edit)
