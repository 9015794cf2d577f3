"""TL110 inference-without-no-grad: Evaluation / inference loop outside torch.no_grad()"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.graph_flow import GRAD_MODE, body_of
from torchlint.engine.loop_events import EventKind
from torchlint.engine.rule import SAFE, Invalid, Replace, Rule, fix
from torchlint.findings import Severity
from torchlint.rules.training._helpers import is_test_file, wrapped_in_no_grad


class InferenceWithoutNoGrad(Rule):
    code = "TL110"
    requires = (
        "val",
        "Val",
        "VAL",
        "test",
        "Test",
        "TEST",
        "predict",
        "Predict",
        "PREDICT",
        "infer",
        "Infer",
        "INFER",
        "train(False)",
    )
    name = "inference-without-no-grad"
    message = "this evaluation loop runs the model with autograd on: wrap it in `with torch.no_grad():` (or `torch.inference_mode()`)"
    severity = Severity.WARNING
    category = "resource"
    summary = "Evaluation / inference loop outside torch.no_grad()"
    what = (
        "Flags an evaluation or inference loop — after `model.eval()`, or a loop over data in a "
        "function named like validate/evaluate/predict/test that never calls `backward()` — that "
        "calls the model outside "
        "`torch.no_grad()`, `torch.inference_mode()` or a function decorated with either. Test files "
        "(`test_*.py`, `tests/`) are not checked."
    )
    why = (
        "`model.eval()` changes dropout and batch-norm; it does not turn autograd off. Every forward "
        "pass still records a graph and keeps its activations, so evaluation uses several times the "
        "memory it needs (often an out-of-memory error on the validation set after training fit) and "
        "runs slower. Anything accumulated from the outputs also keeps those graphs alive."
    )
    example = """\
import torch

def evaluate(model: torch.nn.Module, loader):
    model.eval()
    correct = 0
    for x, y in loader:
        correct += (model(x).argmax(1) == y).sum().item()
    return correct
"""
    fix_example = """\
import torch

def evaluate(model: torch.nn.Module, loader):
    model.eval()
    correct = 0
    with torch.no_grad():
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum().item()
    return correct
"""
    fix_safety = (
        "Wraps the loop in `with torch.no_grad():`. Safe unless the loop needs gradients on purpose "
        "(saliency maps, adversarial examples, test-time training): those call `backward()` or "
        "`torch.autograd.grad` and are not flagged when they do so in the loop."
    )
    VALID = [
        """\
import torch

@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    return [model(x) for x, _ in loader]
""",
        """\
import torch

def evaluate(model, loader):
    model.eval()
    with torch.inference_mode():
        for x, y in loader:
            model(x)
""",
        # training loop: gradients wanted
        """\
model.train()
for x, y in loader:
    optimizer.zero_grad()
    criterion(model(x), y).backward()
    optimizer.step()
""",
        # no_grad inside the loop, around the forward pass
        """\
import torch
model.eval()
for x, y in loader:
    x = x.cuda()
    with torch.no_grad():
        out = model(x)
""",
    ]
    INVALID = [
        Invalid(
            """\
import torch
model = torch.nn.Linear(4, 2)
model.eval()
preds = []
for x in loader:
    preds.append(model(x).argmax(1))
""",
            line=5,
            fixed="""\
import torch
model = torch.nn.Linear(4, 2)
model.eval()
preds = []
with torch.no_grad():
    for x in loader:
        preds.append(model(x).argmax(1))
""",
        ),
        Invalid(
            """\
import torch

class Trainer:
    def __init__(self, model: torch.nn.Module, val_loader: torch.utils.data.DataLoader):
        self.model = model
        self.val_loader = val_loader
        self.criterion = torch.nn.CrossEntropyLoss()
    def validate(self):
        self.model.eval()
        total = 0.0
        for x, y in self.val_loader:
            total += self.criterion(self.model(x), y).item()
        return total
""",
            line=11,
            fixed="""\
import torch

class Trainer:
    def __init__(self, model: torch.nn.Module, val_loader: torch.utils.data.DataLoader):
        self.model = model
        self.val_loader = val_loader
        self.criterion = torch.nn.CrossEntropyLoss()
    def validate(self):
        self.model.eval()
        total = 0.0
        with torch.no_grad():
            for x, y in self.val_loader:
                total += self.criterion(self.model(x), y).item()
        return total
""",
        ),
    ]

    def visit_For(self, node: cst.For) -> None:
        self._check(node)

    def visit_While(self, node: cst.While) -> None:
        self._check(node)

    def _check(self, loop) -> None:
        ctx = self.ctx
        if ctx.under_call(*GRAD_MODE) or is_test_file(ctx.path):  # tests: memory is not the point
            return
        if ".eval(" not in ctx.text and "train(False)" not in ctx.text:
            return  # cheap exit: no evaluation context anywhere in the file
        body = body_of(ctx)
        if body.index(loop) is None or not self._evaluates(loop, body):
            return
        for outer in ctx.loops[:-1]:  # report the outermost such loop only
            if body.index(outer) is not None and self._evaluates(outer, body):
                return
        fix_ = self._wrap(loop)
        self.report(loop, fix=fix_)

    def _evaluates(self, loop, body) -> bool:
        """An inference loop: model calls outside no_grad, no backward, in an evaluation context."""
        if not any(loop in loops and not off for _, _, loops, off in body.forwards):
            return False
        events = self.ctx.loop_analysis.events(loop)
        if any(e.kind is EventKind.BACKWARD for e in events) or any(loop in b.loops for b in body.backwards):
            return False
        start = body.index(loop)
        modes = [m for m in body.modes if m[0] < start]
        if modes and modes[-1][1]:
            return True
        return any(e.kind is EventKind.EVAL and e.depth == 0 for e in events) and not any(
            e.kind is EventKind.TRAIN for e in events
        )

    def _wrap(self, loop):
        new = wrapped_in_no_grad(self.ctx, loop)
        return fix("Wrap the loop in `with torch.no_grad():`", Replace(loop, new), applicability=SAFE) if new else None
