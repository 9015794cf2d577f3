"""Autograd rules (TL105-TL107, TL109, TL110, TL113): graphs kept alive, freed, or never built.

They read the shared def-use analysis of the enclosing function
(`engine/dataflow.py`) and the kinds of `engine/semantics.py`.
"""

from __future__ import annotations

import re
from pathlib import PurePath

import libcst as cst

from torchlint.engine.callargs import with_keyword
from torchlint.engine.graph_flow import GRAD_MODE, NO_GRAD, Grad, body_of
from torchlint.engine.kinds import Kind
from torchlint.engine.loop_events import EventKind, exclusive
from torchlint.engine.names import dotted
from torchlint.engine.rule import InsertAfter, Invalid, RemoveStatement, Replace, Rule, fix
from torchlint.engine.walk import iter_nodes, iter_statements
from torchlint.findings import Severity


def is_test_file(path: str) -> bool:
    p = PurePath(path)
    return (
        p.name.startswith("test_")
        or p.name.endswith("_test.py")
        or p.name == "conftest.py"
        or any(part in ("test", "tests", "testing") for part in p.parts[:-1])
    )


class LossAccumulatedWithGraph(Rule):
    code = "TL105"
    requires = ("loss", "Loss", "criterion", "backward")
    name = "loss-accumulated-with-graph"
    message = "`{acc}` accumulates `{value}` with its autograd graph: every step's graph stays alive and memory grows; use `{value}.item()`"
    severity = Severity.WARNING
    summary = "Loss tensor accumulated across steps (total += loss) keeps every graph alive"
    what = (
        "Flags a loss tensor that still carries its autograd graph being added into a value that "
        "outlives the loop iteration (`total += loss`, `history.append(loss)`, `self.running += loss`) "
        "when that value is never back-propagated or returned."
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
        "Replaces the accumulated loss with `loss.item()`, a Python float: the accumulator becomes a "
        "float and each `.item()` waits for the device. The alternative fix, `loss.detach()`, keeps a "
        "tensor on the device without a host sync; choose it in hot loops and call `.item()` once at "
        "the end."
    )
    VALID = [
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
    ]
    INVALID = [
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
        if acc is None or ctx.under_call(*NO_GRAD):
            return
        kind = ctx.kind(value)
        if not kind & Kind.LOSS or kind & Kind.NUMBER:
            return
        body = body_of(ctx)
        if not self._long_lived(acc, body) or body.feeds_backward(acc) or self._detached(value, body):
            return
        code = ctx.module.code_for_node(value)
        wrapped = code if isinstance(value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) else f"({code})"
        self.report(
            value,
            self.message.format(acc=acc, value=code),
            fix=fix(f"Accumulate `{wrapped}.item()` (a Python number)", Replace(value, f"{wrapped}.item()")),
            alternatives=(
                fix(f"Accumulate `{wrapped}.detach()` (no host sync)", Replace(value, f"{wrapped}.detach()")),
            ),
        )

    def _detached(self, value: cst.BaseExpression, body) -> bool:
        """`loss = loss.detach()` (or computed under no_grad) before it is accumulated."""
        name = dotted(value)
        index = body.index(value)
        d = body.reaching(name, index) if name and index is not None else None
        if d is None:
            return False
        v = d.value
        cut = (
            isinstance(v, cst.Call)
            and isinstance(v.func, cst.Attribute)
            and v.func.attr.value in ("detach", "item", "tolist")
        )
        return d.no_grad or cut

    def _long_lived(self, acc: str, body) -> bool:
        if acc.startswith("self.") and acc.count(".") == 1:
            return True
        loops = [lp for lp in self.ctx.loops if body.index(lp) is not None]
        if not loops:
            return False
        loop = loops[-1]
        start = body.index(loop)
        defs = body.defs.get(acc, ())
        before = any(d.index < start and loop not in d.loops for d in defs)
        reset = any(
            loop in d.loops
            and not (isinstance(d.value, cst.BinaryOperation) and acc in (dotted(d.value.left), dotted(d.value.right)))
            for d in defs
        )
        return before and not reset


class PythonSumOverTensors(Rule):
    code = "TL106"
    requires = ("sum",)
    name = "python-sum-over-tensors"
    message = "builtin `sum()` over tensors adds them one by one starting from the int 0; use `torch.stack(...).sum()`"
    severity = Severity.INFO
    summary = "Builtin sum() over a list of tensors"
    what = (
        "Flags the builtin `sum()` applied to a list, tuple or generator whose elements are tensors "
        "(losses, model outputs, parameter norms). Sums of Python numbers are not flagged."
    )
    why = (
        "`sum(xs)` computes `((0 + x0) + x1) + ...`: one kernel launch and one autograd node per "
        "element, plus a Python-int-to-tensor promotion at the start. `torch.stack(xs).sum()` is one "
        "stack and one reduction — a single node in the graph and much faster backward for long lists."
    )
    example = """\
import torch

losses = [criterion(head(x), y) for head in heads]
loss = sum(losses)
"""
    fix_example = """\
import torch

losses = [criterion(head(x), y) for head in heads]
loss = torch.stack(losses).sum()
"""
    fix_safety = (
        "Equivalent when the elements are tensors of one shape on one device. It differs when the "
        "list may be empty (`sum` returns 0, `torch.stack` raises) or when shapes differ and `sum` "
        "relied on broadcasting; check those cases before applying."
    )
    VALID = [
        "total = sum(loss.item() for loss in losses)\n",
        "n_params = sum(p.numel() for p in model.parameters())\n",
        """\
import torch
losses = [criterion(head(x), y) for head in heads]
loss = torch.stack(losses).sum()
""",
        # a start value: not a chain from int 0
        """\
import torch
loss = sum((criterion(h(x), y) for h in heads), torch.tensor(0.0))
""",
        """\
scores = []
for x in xs:
    scores.append(float(model(x)))
print(sum(scores))
""",
    ]
    INVALID = [
        Invalid(
            """\
import torch
reg = sum(p.pow(2).sum() for p in model.parameters())
""",
            line=2,
            fixed="""\
import torch
reg = torch.stack([p.pow(2).sum() for p in model.parameters()]).sum()
""",
        ),
        Invalid(
            """\
losses = []
for x, y in batches:
    losses.append(criterion(model(x), y))
total = sum(losses)
""",
            line=4,
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Name) and func.value == "sum") or len(node.args) != 1:
            return
        arg = node.args[0]
        ctx = self.ctx
        if arg.keyword is not None or arg.star or ctx.qualname(func) is not None or ctx.scope is None:
            return
        if ctx.scope.lookup("sum") is not None or "sum" in ctx.local_functions():
            return
        kind = ctx.semantics.element_kind(arg.value, ctx.scope)
        if not kind & Kind.TENSOR:
            return
        edit = None
        if ctx.imports.table.get("torch") == "torch":
            elements = arg.value
            if isinstance(elements, cst.GeneratorExp):
                elements = cst.ListComp(elt=elements.elt, for_in=elements.for_in)
            edit = fix(
                "Use `torch.stack(...).sum()`",
                Replace(node, f"torch.stack({ctx.module.code_for_node(elements)}).sum()"),
            )
        self.report(node, fix=edit)


class BackwardThroughFreedGraph(Rule):
    code = "TL107"
    requires = ("backward",)
    name = "backward-through-freed-graph"
    message = "this `backward()` frees the graph of `{shared}`, which {later} back-propagates through again: pass `retain_graph=True` here (or sum the losses)"
    severity = Severity.ERROR
    summary = "Second backward() through a graph an earlier backward() freed"
    what = (
        "Flags a `backward()` without `retain_graph=True` when another backward pass later goes "
        "through part of the same graph: two losses built from one forward pass, or a backward "
        "inside a loop through a tensor computed once before the loop."
    )
    why = (
        "By default `backward()` frees the intermediate buffers of the graph it traverses. A second "
        "backward through any part of that graph fails with `RuntimeError: Trying to backward through "
        "the graph a second time`. Summing the losses and calling `backward()` once is usually the "
        "better fix (one traversal); `retain_graph=True` keeps the buffers alive until the last pass."
    )
    example = """\
features = backbone(images)
loss_cls = criterion(cls_head(features), labels)
loss_box = box_loss(box_head(features), boxes)
loss_cls.backward()
loss_box.backward()
"""
    fix_example = """\
features = backbone(images)
loss_cls = criterion(cls_head(features), labels)
loss_box = box_loss(box_head(features), boxes)
(loss_cls + loss_box).backward()
"""
    fix_safety = (
        "Adds `retain_graph=True` to this `backward()`. Correct, but the graph's buffers stay alive "
        "until the last backward, raising peak memory; summing the losses into one backward is "
        "cheaper when you can restructure the code."
    )
    VALID = [
        """\
features = backbone(images)
loss_cls = criterion(cls_head(features), labels)
loss_box = box_loss(box_head(features), boxes)
loss_cls.backward(retain_graph=True)
loss_box.backward()
""",
        """\
features = backbone(images)
(criterion(cls_head(features), labels) + box_loss(box_head(features), boxes)).backward()
""",
        # GAN: the discriminator pass sees a detached copy
        """\
fake = generator(z)
d_loss = criterion(discriminator(fake.detach()), zeros)
d_loss.backward()
g_loss = criterion(discriminator(fake), ones)
g_loss.backward()
""",
        # the forward pass is redone inside the loop
        """\
for x, y in loader:
    out = model(x)
    criterion(out, y).backward()
""",
        # the two backward calls are alternatives
        """\
out = model(x)
if use_aux:
    aux_loss(out).backward()
else:
    main_loss(out).backward()
""",
    ]
    INVALID = [
        Invalid(
            """\
import torch
out = model(x)
for target in targets:
    loss = criterion(out, target)
    loss.backward()
""",
            line=5,
            fixed="""\
import torch
out = model(x)
for target in targets:
    loss = criterion(out, target)
    loss.backward(retain_graph=True)
""",
        ),
        Invalid(
            """\
def train_step(model, x, y):
    logits = model(x)
    ce = criterion(logits, y)
    reg = logits.pow(2).mean()
    ce.backward()
    reg.backward()
""",
            line=5,
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        if not isinstance(node.func, cst.Attribute) or node.func.attr.value not in ("backward", "manual_backward"):
            return
        body = body_of(self.ctx)
        me = next((b for b in body.backwards if b.call is node), None)
        if me is None or me.retain or me.target is None:
            return
        mine = body.graph_defs(me.target, me.index)
        if not mine:
            return
        if me.loops:  # a graph from before the loop, freed in the first iteration
            loop = me.loops[-1]
            start = body.index(loop)
            outside = [d for d in mine if d.index < start and loop not in d.loops and not body.defined_in(d.name, loop)]
            if outside:
                return self._report(node, min(outside, key=lambda d: d.index).name, "the next iteration")
        for other in body.backwards:
            if other.index <= me.index or exclusive(me, other) or other.target is None:
                continue
            shared = mine & body.graph_defs(other.target, other.index)
            if shared:
                name = min(shared, key=lambda d: d.index).name
                return self._report(node, name, f"`{self.ctx.module.code_for_node(other.call)}`")

    def _report(self, node: cst.Call, shared: str, later: str) -> None:
        edit = fix("Pass `retain_graph=True`", Replace(node, with_keyword(node, "retain_graph", "True")))
        self.report(node, self.message.format(shared=shared, later=later), fix=edit)


class GradOfNonLeaf(Rule):
    code = "TL109"
    requires = ("grad",)
    name = "grad-of-non-leaf"
    message = "`{name}` is produced by an operation (not a leaf), so `{name}.grad` is None after backward(); call `{name}.retain_grad()` first"
    severity = Severity.ERROR
    summary = "Reading .grad of a non-leaf tensor without retain_grad()"
    what = (
        "Flags a read of `x.grad` where `x` was computed from tensors that require grad (a model "
        "output, `w * 2`, `torch.randn(..., requires_grad=True).cuda()`) and `x.retain_grad()` is "
        "never called."
    )
    why = (
        "Autograd stores `.grad` only on leaf tensors (those created by the user, such as parameters). "
        "For intermediate results it stays `None` — PyTorch only warns when you read it — so the "
        "code prints `None`, or crashes later with `unsupported operand type(s) ... 'NoneType'`. A "
        "common trap: `torch.randn(3, requires_grad=True).cuda()` is the output of `.cuda()`, not a leaf."
    )
    example = """\
import torch

x = torch.randn(3, requires_grad=True)
y = x * 2
y.sum().backward()
print(y.grad)
"""
    fix_example = """\
import torch

x = torch.randn(3, requires_grad=True)
y = x * 2
y.retain_grad()
y.sum().backward()
print(y.grad)
"""
    fix_safety = "Inserts `x.retain_grad()` right after `x` is assigned. Safe; it keeps one extra gradient tensor."
    VALID = [
        """\
import torch
x = torch.randn(3, requires_grad=True)
(x * 2).sum().backward()
print(x.grad)
""",
        """\
import torch
x = torch.randn(3, requires_grad=True)
y = x * 2
y.retain_grad()
y.sum().backward()
print(y.grad)
""",
        # detached and made a leaf again (adversarial examples)
        """\
import torch
delta = (images + 0.1 * torch.randn_like(images)).detach().requires_grad_(True)
criterion(model(delta), labels).backward()
step = delta.grad.sign()
""",
        """\
import torch
w = torch.nn.Parameter(torch.randn(3, 3))
(w @ w).sum().backward()
print(w.grad)
""",
        # checking for None is the point
        """\
out = model(x)
out.sum().backward()
if out.grad is None:
    print("no grad")
""",
    ]
    INVALID = [
        Invalid(
            """\
import torch
w = torch.randn(3, 3, requires_grad=True).cuda()
loss = (w @ w).sum()
loss.backward()
w -= 0.1 * w.grad
""",
            line=5,
            fixed="""\
import torch
w = torch.randn(3, 3, requires_grad=True).cuda()
w.retain_grad()
loss = (w @ w).sum()
loss.backward()
w -= 0.1 * w.grad
""",
        ),
        Invalid(
            """\
def saliency(model, image, label):
    logits = model(image)
    criterion(logits, label).backward()
    return logits.grad.abs()
""",
            line=4,
        ),
    ]

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._skip: set = set()

    def visit_Assign(self, node: cst.Assign) -> None:
        self._skip.update(t.target for t in node.targets)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._skip.add(node.target)

    def visit_Del(self, node: cst.Del) -> None:
        self._skip.update(iter_nodes(node))

    def visit_Comparison(self, node: cst.Comparison) -> None:
        # `x.grad is None`: the code expects None
        if any(isinstance(c.comparator, cst.Name) and c.comparator.value == "None" for c in node.comparisons):
            self._skip.add(node.left)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value != "grad" or not isinstance(node.value, cst.Name) or node in self._skip:
            return
        name = node.value.value
        body = body_of(self.ctx)
        index = body.index(node)
        if index is None or name in body.retained:
            return
        if body.grad_status(node.value, index) is not Grad.NON_LEAF:
            return
        d = body.reaching(name, index)
        edit = None
        if d is not None and isinstance(d.stmt, cst.SimpleStatementLine):
            edit = fix(
                f"Call `{name}.retain_grad()` after `{name}` is computed", InsertAfter(d.stmt, f"{name}.retain_grad()")
            )
        self.report(node, self.message.format(name=name), fix=edit)


_EVAL_NAME = re.compile(
    r"(^|_)(val|valid|validate|validation|eval|evaluate|evaluation|test|predict|prediction|infer|inference)(_|$)", re.I
)


_DATA_WORDS = ("loader", "batch", "dataset", "data", "samples", "images", "inputs", "dl")


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

def evaluate(model, loader):
    model.eval()
    correct = 0
    for x, y in loader:
        correct += (model(x).argmax(1) == y).sum().item()
    return correct
"""
    fix_example = """\
import torch

def evaluate(model, loader):
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
model.eval()
preds = []
for x in loader:
    preds.append(model(x).argmax(1))
""",
            line=4,
            fixed="""\
import torch
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
    def validate(self):
        total = 0.0
        for x, y in self.val_loader:
            total += self.criterion(self.model(x), y).item()
        return total
""",
            line=6,
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
        fn = ctx.current_function
        named = fn is not None and bool(_EVAL_NAME.search(fn.name.value))
        if not named and ".eval(" not in ctx.text and "train(False)" not in ctx.text:
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
        if any(e.kind is EventKind.EVAL and e.depth == 0 for e in events) and not any(
            e.kind is EventKind.TRAIN for e in events
        ):
            return True
        fn = self.ctx.current_function
        return (
            fn is not None and bool(_EVAL_NAME.search(fn.name.value)) and not body.backwards and self._over_data(loop)
        )

    def _over_data(self, loop) -> bool:
        """`for batch in loader` / `enumerate(tqdm(val_dataloader))` / `for x in batches`."""
        if not isinstance(loop, cst.For):
            return False
        it = loop.iter
        while isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.args:
            if it.func.value == "range":
                return False
            it = it.args[0].value  # enumerate(...), tqdm(...), zip(...), iter(...)
        if self.ctx.kind(it) & Kind.DATALOADER:
            return True
        name = dotted(it)
        return name is not None and any(w in name.rpartition(".")[2].lower() for w in _DATA_WORDS)

    def _wrap(self, loop):
        ctx = self.ctx
        if ctx.imports.table.get("torch") != "torch":
            return None
        module = ctx.module
        if any(
            isinstance(n, (cst.SimpleString, cst.FormattedString)) and "\n" in module.code_for_node(n)
            for n in iter_nodes(loop)
        ):
            return None  # re-indenting would change a multi-line string
        indent = _indent_of(module, loop)
        if indent is None:
            return None
        code = module.code_for_node(loop.with_changes(leading_lines=()))
        nl = module.default_newline
        if code.endswith(nl):
            code = code[: -len(nl)]
        comment = _last_comment(loop)
        if comment is not None and code.endswith(comment):
            code = code[: -len(comment)].rstrip(" \t")
        unit = module.default_indent
        lines = [indent + unit + line if line.strip() else line for line in code.split(nl)]
        new = "with torch.no_grad():" + nl + nl.join(lines)
        return fix("Wrap the loop in `with torch.no_grad():`", Replace(loop, new))


def _indent_of(module: cst.Module, target: cst.BaseStatement) -> str | None:
    """The indentation of `target`'s first line, from the nesting of indented blocks."""
    stack = [(s, "") for s in reversed(module.body)]
    while stack:
        stmt, indent = stack.pop()
        if stmt is target:
            return indent
        if not isinstance(stmt, cst.BaseCompoundStatement):
            continue
        suites = [
            stmt.body,
            *(h.body for h in getattr(stmt, "handlers", ())),
            *(c.body for c in getattr(stmt, "cases", ())),
        ]
        orelse, final = getattr(stmt, "orelse", None), getattr(stmt, "finalbody", None)
        if isinstance(orelse, cst.If):
            stack.append((orelse, indent))  # `elif` sits at the `if`'s indentation
        elif orelse is not None:
            suites.append(orelse.body)
        if final is not None:
            suites.append(final.body)
        for suite in reversed(suites):
            if isinstance(suite, cst.IndentedBlock):
                inner = indent + (suite.indent if suite.indent is not None else module.default_indent)
                stack.extend((s, inner) for s in reversed(suite.body))
    return None


def _last_comment(stmt: cst.BaseStatement) -> str | None:
    """The trailing comment of the compound statement's last line, as rendered."""
    last = None
    for s in iter_statements([stmt], into_functions=True):
        if isinstance(s, cst.SimpleStatementLine):
            last = s.trailing_whitespace
        elif isinstance(s, cst.BaseCompoundStatement) and isinstance(s.body, cst.SimpleStatementSuite):
            last = s.body.trailing_whitespace
    return last.comment.value if last is not None and last.comment is not None else None


class DetectAnomalyEnabled(Rule):
    code = "TL113"
    requires = ("anomaly",)
    name = "detect-anomaly-enabled"
    message = "autograd anomaly detection is switched on: every backward pass records stack traces and checks for NaN, several times slower"
    severity = Severity.WARNING
    summary = "torch.autograd anomaly detection left enabled outside tests"
    what = (
        "Flags `torch.autograd.set_detect_anomaly(True)` and `torch.autograd.detect_anomaly()` in code "
        "that is not a test file, unless it is behind an `if` (a debug switch) or inside a function "
        "named as a debugging or checking tool (`debug_step`, `check_gradients`)."
    )
    why = (
        "Anomaly mode records a Python stack trace for every operation in the forward pass and checks "
        "every gradient for NaN in the backward pass. It is a debugging tool: left on, training runs "
        "several times slower and uses more host memory, with no change in the results."
    )
    example = """\
import torch

torch.autograd.set_detect_anomaly(True)
train(model, loader)
"""
    fix_example = """\
import torch

train(model, loader)
"""
    fix_safety = "Removes the statement. Safe: anomaly mode never changes results, only diagnostics."
    VALID = [
        """\
import torch
if args.debug:
    torch.autograd.set_detect_anomaly(True)
""",
        """\
import torch
torch.autograd.set_detect_anomaly(False)
""",
        """\
import torch
torch.autograd.set_detect_anomaly(args.detect_anomaly)
""",
    ]
    INVALID = [
        Invalid(
            """\
import torch
torch.autograd.set_detect_anomaly(True)
main()
""",
            line=2,
            fixed="""\
import torch
main()
""",
        ),
        Invalid(
            """\
from torch import autograd

def train_step(model, x):
    with autograd.detect_anomaly():
        model(x).sum().backward()
""",
            line=4,
        ),
    ]

    _SET = ("torch.autograd.set_detect_anomaly", "torch.autograd.anomaly_mode.set_detect_anomaly")
    _CTX = ("torch.autograd.detect_anomaly", "torch.autograd.anomaly_mode.detect_anomaly")

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._guards = 0  # enclosing `if`s other than `if __name__ == "__main__":`
        self._line: cst.SimpleStatementLine | None = None
        self._blocks: list = []

    def visit_If(self, node: cst.If) -> None:
        self._guards += not _is_main_guard(node.test)

    def leave_If(self, node: cst.If) -> None:
        self._guards -= not _is_main_guard(node.test)

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._line = node

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._blocks.append(node.body)

    def leave_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._blocks.pop()

    def visit_Call(self, node: cst.Call) -> None:
        q = self.ctx.qualname(node.func)
        if q not in self._SET and q not in self._CTX:
            return
        if self._guards or is_test_file(self.ctx.path):
            return
        if any(_DEBUG_NAME.search(fn.name.value) for fn in self.ctx.functions):
            return  # a debugging / checking tool turns anomaly mode on deliberately
        if q in self._SET:
            arg = node.args[0] if node.args else None
            if arg is None or not (isinstance(arg.value, cst.Name) and arg.value.value == "True"):
                return
        edit = None
        line = self._line
        block = self._blocks[-1] if self._blocks else self.ctx.module.body
        if (
            q in self._SET
            and line is not None
            and len(line.body) == 1
            and isinstance(line.body[0], cst.Expr)
            and line.body[0].value is node
            and len(block) > 1
            and line in block
        ):
            edit = fix("Remove the call", RemoveStatement(line))
        self.report(node, fix=edit)


_DEBUG_NAME = re.compile(r"debug|check|anomal|diagnos", re.I)


def _is_main_guard(test: cst.BaseExpression) -> bool:
    return isinstance(test, cst.Comparison) and dotted(test.left) == "__name__"
