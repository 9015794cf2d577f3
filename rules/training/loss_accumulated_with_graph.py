"""TL105 loss-accumulated-with-graph: Loss tensor accumulated across steps (total += loss) keeps every graph alive"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.flow.accumulators import backpropagated_this_iteration, may_outlive_iteration, outlives_iteration
from torchlint.engine.flow.graph_flow import TENSOR_OPS, Body, body_of
from torchlint.engine.rule import SAFE, UNSAFE, Invalid, Replace, Rule, fix
from torchlint.engine.semantic.kinds import GRAPH_CUTTING_METHODS, NO_GRAD, Kind
from torchlint.engine.semantic.names import dotted
from torchlint.findings import Severity

# A list of losses handed to these, or a total whose tensor methods are called, needs tensors: `.item()`
# would break it (`torch.stack` of floats raises), so the fix keeps a tensor with `.detach()`.
_STACKERS = frozenset(f"torch.{f}" for f in ("stack", "cat", "concat", "concatenate", "vstack", "hstack", "dstack"))
_TENSOR_METHODS = TENSOR_OPS | {"item", "detach", "cpu", "cuda", "to", "numpy"}


class LossAccumulatedWithGraph(Rule):
    code = "TL105"
    analyses = frozenset(
        {Analysis.CALL_SITES, Analysis.GRAPH_BODIES, Analysis.KINDS, Analysis.OWN_SUMMARY, Analysis.SCOPES}
    )
    requires = ("loss", "Loss", "criterion", "backward")
    name = "loss-accumulated-with-graph"
    message = "`{acc}` accumulates `{value}` with its autograd graph: every step's graph stays alive and memory grows; accumulate `{wrapped}.detach()` (or `.item()` for a Python number)"
    severity = Severity.WARNING
    category = "resource"
    summary = "Loss tensor accumulated across steps (total += loss) keeps every graph alive"
    what = (
        "Flags a loss tensor that still carries its autograd graph being added into a value that "
        "outlives the loop iteration (`total += loss`, `history.append(loss)`, `self.running += loss`) "
        "when that value is never back-propagated, and never returned unless each loss was already "
        "back-propagated in the iteration (then no caller can back-propagate it again)."
    )
    why = (
        "`total += loss` builds a new graph node that references `loss` and, through it, the whole "
        "forward graph of that step (activations included, unless `backward()` already freed them). "
        "Over an epoch the references pile up: memory grows step by step until an out-of-memory error, "
        "and printing `total` syncs the device anyway. Logging wants a number: `loss.item()`."
    )
    example = """\
total_loss = 0.0
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    total_loss += loss
print(total_loss / len(loader))
"""
    fix_example = """\
total_loss = 0.0
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    total_loss += loss.item()
print(total_loss / len(loader))
"""
    fix_safety = (
        "Two fixes. `loss.detach()` is safe: the same values, still a tensor, without the graph nobody "
        "back-propagates (the rule checked). `loss.item()` is unsafe: the accumulator becomes a Python "
        "float (code that later treats it as a tensor breaks) and each `.item()` waits for the device. It "
        "is the first fix when the accumulator never meets a tensor operation in the function (logging "
        "wants a number), but the editor lists the safe `.detach()` first and `--fix` (with or without "
        "`--unsafe-fixes`) and fix-all apply it; when the accumulator meets a tensor operation "
        "(`torch.stack(history)`, `total.cpu()`) or is returned to a caller that may, `.detach()` is the "
        "first fix too."
    )
    VALID = [
        """\
import torch
from torch import nn
model = nn.Linear(2, 2)
losses = []
for batch in loader:
    with torch.no_grad():
        outputs = model(batch)
    loss = outputs.loss
    losses.append(loss)
""",
        """\
total = 0.0
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    total += loss.item()
""",
        """\
total = 0.0
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    total += loss.detach()
""",
        # losses collected, then stacked and back-propagated once
        """\
losses = []
for head in heads:
    losses.append(criterion(head(x), y))
torch.stack(losses).sum().backward()
""",
        # accumulation over micro-batches that is back-propagated
        """\
total = 0
for x, y in chunks:
    total = total + criterion(model(x), y)
total.backward()
""",
        """\
import torch
total = 0.0
with torch.no_grad():
    for x, y in val_loader:
        total += criterion(model(x), y)
""",
        # returned for the caller to back-propagate: nothing was back-propagated here
        """\
def chunk_losses(chunks):
    losses = []
    for x, y in chunks:
        losses.append(criterion(model(x), y))
    return losses
""",
        # back-propagated only on some iterations: the others may be the caller's
        """\
def epoch(loader, train):
    history = []
    for x, y in loader:
        loss = criterion(model(x), y)
        if train:
            loss.backward()
        history.append(loss)
    return history
""",
        # returned after back-propagating, but as numbers
        """\
def train_epoch(loader):
    history = []
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        history.append(loss.item())
    return history
""",
        # the graph is kept for a second pass, so the caller may back-propagate the total
        """\
def train_epoch(loader):
    total = 0.0
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward(retain_graph=True)
        total += loss
    return total
""",
    ]
    INVALID = [
        # back-propagated in the loop, then returned: no caller can back-propagate it again
        Invalid(
            """\
import torch
import torch.nn.functional as F
def train_epoch(model, opt, loader):
    history = []
    for x, y in loader:
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        history.append(loss)
    return history
""",
            line=10,
            fixed="""\
import torch
import torch.nn.functional as F
def train_epoch(model, opt, loader):
    history = []
    for x, y in loader:
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        history.append(loss.detach())
    return history
""",
            alternatives=(
                """\
import torch
import torch.nn.functional as F
def train_epoch(model, opt, loader):
    history = []
    for x, y in loader:
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        history.append(loss.item())
    return history
""",
            ),
        ),
        Invalid(
            """\
class Trainer:
    def fit(self, loader):
        for x, y in loader:
            loss = self.criterion(self.model(x), y)
            loss.backward()
            self.history.append(loss)
        return self.history
""",
            line=6,
            fixed="""\
class Trainer:
    def fit(self, loader):
        for x, y in loader:
            loss = self.criterion(self.model(x), y)
            loss.backward()
            self.history.append(loss.detach())
        return self.history
""",
            alternatives=(
                """\
class Trainer:
    def fit(self, loader):
        for x, y in loader:
            loss = self.criterion(self.model(x), y)
            loss.backward()
            self.history.append(loss.item())
        return self.history
""",
            ),
        ),
        Invalid(
            """\
history = []
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    history.append(loss)
""",
            line=5,
            fixed="""\
history = []
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    history.append(loss.item())
""",
            alternatives=(
                """\
history = []
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    history.append(loss.detach())
""",
            ),
        ),
        # the list is stacked later: it must stay a list of tensors
        Invalid(
            """\
import torch
history = []
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    history.append(loss)
print(torch.stack(history).mean())
""",
            line=6,
            fixed="""\
import torch
history = []
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    history.append(loss.detach())
print(torch.stack(history).mean())
""",
            alternatives=(
                """\
import torch
history = []
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    history.append(loss.item())
print(torch.stack(history).mean())
""",
            ),
        ),
        Invalid(
            """\
class Trainer:
    def step(self, x, y):
        loss = self.criterion(self.model(x), y)
        loss.backward()
        self.running += loss
""",
            line=5,
            fixed="""\
class Trainer:
    def step(self, x, y):
        loss = self.criterion(self.model(x), y)
        loss.backward()
        self.running += loss.item()
""",
            alternatives=(
                """\
class Trainer:
    def step(self, x, y):
        loss = self.criterion(self.model(x), y)
        loss.backward()
        self.running += loss.detach()
""",
            ),
        ),
    ]

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.operator, cst.AddAssign):
            self._check(node.target, node.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        value = node.value
        if (
            len(node.targets) != 1
            or not isinstance(value, cst.BinaryOperation)
            or not isinstance(value.operator, cst.Add)
        ):
            return
        acc = dotted(node.targets[0].target)
        if acc is None:
            return
        if dotted(value.left) == acc:
            self._check(node.targets[0].target, value.right)
        elif dotted(value.right) == acc:
            self._check(node.targets[0].target, value.left)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "append" and len(node.args) == 1:
            self._check(func.value, node.args[0].value)

    def _check(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        ctx = self.ctx
        acc = dotted(target)
        if isinstance(target, cst.Subscript):  # stats["loss"] += loss
            acc = dotted(target.value)
        if acc is None or not may_outlive_iteration(ctx, acc) or ctx.under_call(*NO_GRAD):
            return
        kind = ctx.kind(value)
        if not kind & Kind.LOSS or kind & Kind.NUMBER:
            return
        body = body_of(ctx)
        if not outlives_iteration(ctx, acc, body) or body.feeds_backward(acc, returned=False):
            return
        # a returned accumulator may be the caller's to back-propagate, unless its losses already were
        returned = body.feeds_backward(acc)
        if returned and not backpropagated_this_iteration(ctx, body, value):
            return
        if self._detached(value, body):
            return
        code = ctx.module.code_for_node(value)
        wrapped = code if isinstance(value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) else f"({code})"
        item = fix(
            f"Accumulate `{wrapped}.item()` (a Python number)",
            Replace(value, f"{wrapped}.item()"),
            applicability=UNSAFE,
            risk="turns the total into a Python float",
        )
        detach = fix(
            f"Accumulate `{wrapped}.detach()` (still a tensor)",
            Replace(value, f"{wrapped}.detach()"),
            applicability=SAFE,
        )
        # the caller of a returned accumulator may stack it: keep tensors there too
        first, second = (detach, item) if returned or self._meets_tensor_op(acc, body) else (item, detach)
        self.report(value, self.message.format(acc=acc, value=code, wrapped=wrapped), fix=first, alternatives=(second,))

    def _meets_tensor_op(self, acc: str, body: Body) -> bool:
        """`torch.stack(acc)`, `acc.mean()`, `acc.cpu()` ... somewhere in the function."""
        for n in body.nodes:
            if not isinstance(n, cst.Call):
                continue
            if (
                isinstance(n.func, cst.Attribute)
                and n.func.attr.value in _TENSOR_METHODS
                and dotted(n.func.value) == acc
            ):
                return True
            if self.ctx.qualname(n.func) in _STACKERS and any(dotted(a.value) == acc for a in n.args):
                return True
        return False

    def _detached(self, value: cst.BaseExpression, body: Body, depth: int = 0) -> bool:
        """`loss = loss.detach()` (or computed under no_grad) before it is accumulated; also a field of
        such a value (`outputs = model(x)` under no_grad, then `loss = outputs.loss`)."""
        name = dotted(value)
        index = body.index(value)
        d = body.reaching(name, index) if name and index is not None else None
        if d is None:
            base = _base(value)
            return base is not value and depth < 3 and self._detached(base, body, depth + 1)
        v = d.value
        cut = (
            isinstance(v, cst.Call) and isinstance(v.func, cst.Attribute) and v.func.attr.value in GRAPH_CUTTING_METHODS
        )
        if d.no_grad or cut:
            return True
        read = _base(v) if v is not None else None
        return read is not None and read is not v and depth < 3 and self._detached(read, body, depth + 1)


def _base(expr: cst.BaseExpression) -> cst.BaseExpression:
    """`outputs` for `outputs.loss` or `outputs["loss"]`: what a field read takes its value from."""
    if isinstance(expr, (cst.Attribute, cst.Subscript)):
        return expr.value
    return expr
