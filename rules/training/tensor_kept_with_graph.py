"""TL117 tensor-kept-with-graph: Model output kept across iterations with its autograd graph"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.core.walk import iter_nodes
from torchlint.engine.flow.accumulators import may_outlive_iteration, outlives_iteration
from torchlint.engine.flow.graph_flow import Body, Grad, body_of, model_calls
from torchlint.engine.flow.no_grad_callers import runs_without_grad
from torchlint.engine.rule import SAFE, UNSAFE, Invalid, Replace, Rule, fix
from torchlint.engine.semantic.kinds import NO_GRAD, Kind
from torchlint.engine.semantic.names import dotted
from torchlint.findings import Severity

# Results that never require grad whatever their input: indices, comparisons, integer casts.
_NO_GRAD_METHODS = frozenset(
    "argmax argmin argsort long int bool byte eq ne gt ge lt le round sign floor ceil nonzero".split()
)
_INDEX_PAIRS = frozenset({"max", "min", "topk", "sort", "kthvalue", "mode", "median"})  # (values, indices)
# Lightning runs these hooks with autograd off.
_LIGHTNING_NO_GRAD_HOOKS = frozenset({"validation_step", "test_step", "predict_step"})
_NOT_OUTPUTS = Kind.LOSS | Kind.NUMBER | Kind.MODEL | Kind.OPTIMIZER | Kind.CRITERION | Kind.CONTAINER


class TensorKeptWithGraph(Rule):
    code = "TL117"
    analyses = frozenset(
        {
            Analysis.CALLING_CONTEXTS,
            Analysis.CALL_SITES,
            Analysis.GRAPH_BODIES,
            Analysis.KINDS,
            Analysis.OWN_SUMMARY,
            Analysis.SCOPES,
            Analysis.VALUES,
        }
    )
    requires = ("append", "extend", "+=", "]=", "] =")
    name = "tensor-kept-with-graph"
    message = "`{acc}` keeps `{value}` with its autograd graph: every iteration's graph (activations included) stays alive and memory grows; store `{value}.detach()`"
    severity = Severity.WARNING
    category = "resource"
    opt_in = (
        "Measured on 25 public repositories it was not tuned on (bench/realworld, unseen at 2026-12-03 and "
        "2026-12-04), 0 of its 3 findings were right (3 debatable): one small generator sample per epoch kept "
        "with its graph, a few MB over a whole run. Select it where model outputs are collected per step."
    )
    summary = "Model output kept across iterations with its autograd graph"
    what = (
        "Flags a tensor computed with autograd on from a model's forward pass (outputs, predictions, "
        "samples) that is stored into a container outliving the loop iteration (`preds.append(out)`, "
        "`outputs += [out]`, `by_id[k] = out`, `self.outputs.append(out)`) and never back-propagated. "
        "Silent under `torch.no_grad()` / `inference_mode()`, in functions only ever called under them, "
        "in Lightning's `validation_step` / `test_step` / `predict_step`, for detached or host values "
        "(`.detach()`, `.item()`, `.numpy()`), for indices and comparisons, for containers created in "
        "the iteration, for containers that are back-propagated or returned, and for losses (TL105)."
    )
    why = (
        "A tensor produced with autograd on holds its `grad_fn`, and through it every activation the "
        "forward pass saved for a backward that never comes. Kept in a list across iterations, each "
        "step's whole graph stays alive: memory grows with every batch until an out-of-memory error, "
        "typically in an evaluation or sampling loop that worked on a small set."
    )
    example = """\
import torch

model = torch.nn.Linear(16, 4)
predictions = []
for x in loader:
    logits = model(x)
    predictions.append(logits)
scores = torch.cat(predictions).softmax(-1)
"""
    fix_example = """\
import torch

model = torch.nn.Linear(16, 4)
predictions = []
for x in loader:
    logits = model(x)
    predictions.append(logits.detach())
scores = torch.cat(predictions).softmax(-1)
"""
    fix_safety = (
        "Stores `value.detach()`: the same values without the graph. Safe when the container is a local "
        "name that never reaches a `backward()` or a `return` (the rule checked) and is not handed to "
        "an attribute: it can then only be read, and reading needs no graph. Unsafe for a `self.` "
        "attribute or a container stored elsewhere, which another method may still back-propagate. "
        "Wrapping the forward pass in `with torch.no_grad():` is the better fix when nothing in the "
        "loop needs gradients; the rule does not make that edit."
    )
    VALID = [
        # under no_grad
        """\
import torch
model = torch.nn.Linear(16, 4)
predictions = []
with torch.no_grad():
    for x in loader:
        predictions.append(model(x))
""",
        # already detached / on the host
        """\
import torch
model = torch.nn.Linear(16, 4)
predictions, values = [], []
for x in loader:
    out = model(x)
    predictions.append(out.detach())
    values.append(out.cpu().numpy())
    values.append(out.argmax(1))
""",
        # the collected outputs are back-propagated together
        """\
import torch
model = torch.nn.Linear(16, 4)
outputs = []
for x in chunks:
    outputs.append(model(x))
torch.cat(outputs).sum().backward()
""",
        # the container is created inside the iteration
        """\
import torch
model = torch.nn.Linear(16, 4)
for x in loader:
    outputs = []
    outputs.append(model(x))
    print(torch.cat(outputs).shape)
""",
        # a helper only ever called under no_grad
        """\
import torch
model = torch.nn.Linear(16, 4)

def collect(loader):
    outs = []
    for x in loader:
        outs.append(model(x))
    print(len(outs))

with torch.no_grad():
    collect(val_loader)
""",
        # the output is back-propagated in the same step: backward frees what its graph saved
        """\
import torch
model = torch.nn.Linear(16, 4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
history = []
for x, y in loader:
    out = model(x)
    loss = torch.nn.functional.cross_entropy(out, y)
    loss.backward()
    optimizer.step()
    history.append(out)
""",
        # Lightning runs validation_step under no_grad
        """\
import lightning as L
import torch

class Net(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(16, 4)
        self.outputs = []

    def validation_step(self, batch, batch_idx):
        self.outputs.append(self.layer(batch))
""",
    ]
    INVALID = [
        Invalid(example, line=7, fixed=fix_example),
        Invalid(
            """\
import torch
model = torch.nn.Linear(16, 4)
samples = []
for z in noise_batches:
    samples += [model(z)]
""",
            line=5,
            fixed="""\
import torch
model = torch.nn.Linear(16, 4)
samples = []
for z in noise_batches:
    samples += [model(z).detach()]
""",
        ),
        Invalid(
            """\
import torch
model = torch.nn.Linear(16, 4)
by_id = {}
for ids, x in loader:
    by_id[ids] = model(x).softmax(-1)
""",
            line=5,
            fixed="""\
import torch
model = torch.nn.Linear(16, 4)
by_id = {}
for ids, x in loader:
    by_id[ids] = model(x).softmax(-1).detach()
""",
        ),
        # an attribute may be read (or back-propagated) by another method: the fix is unsafe
        Invalid(
            """\
import torch

class Sampler:
    def __init__(self, model: torch.nn.Module):
        self.model = model
        self.kept = []

    def run(self, batches):
        for z in batches:
            self.kept.append(self.model(z))
""",
            line=10,
            fixed="""\
import torch

class Sampler:
    def __init__(self, model: torch.nn.Module):
        self.model = model
        self.kept = []

    def run(self, batches):
        for z in batches:
            self.kept.append(self.model(z).detach())
""",
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or len(node.args) != 1 or node.args[0].keyword is not None:
            return
        arg = node.args[0].value
        if func.attr.value == "append":
            self._check(func.value, arg)
        elif func.attr.value == "extend" and isinstance(arg, (cst.List, cst.Tuple)):
            for el in arg.elements:
                self._check(func.value, el.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.operator, cst.AddAssign) and isinstance(node.value, (cst.List, cst.Tuple)):
            for el in node.value.elements:
                self._check(node.target, el.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            if isinstance(t.target, cst.Subscript):
                self._check(t.target.value, node.value)

    def _check(self, container: cst.BaseExpression, value: cst.BaseExpression) -> None:
        ctx = self.ctx
        acc = dotted(container)
        if acc is None or isinstance(value, cst.StarredElement) or not may_outlive_iteration(ctx, acc):
            return
        if self._in_forward() or ctx.kind(value) & _NOT_OUTPUTS or _never_requires_grad(value):
            return
        body = body_of(ctx)
        index = body.index(value)
        if index is None or not outlives_iteration(ctx, acc, body):
            return
        if body.grad_status(_on_device(value), index) is not Grad.NON_LEAF or not model_calls(body, value, index):
            return
        names = [d.name for d in body.graph_defs(value, index)]
        if body.feeds_backward(acc) or any(body.feeds_backward(n) for n in names):
            return
        if self._without_grad():  # last: its callers may be in any project file
            return
        code = ctx.module.code_for_node(value)
        wrapped = code if isinstance(value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) else f"({code})"
        escapes = "." in acc or _stored_elsewhere(body, acc)
        detach = fix(
            f"Store `{wrapped}.detach()`",
            Replace(value, f"{wrapped}.detach()"),
            applicability=UNSAFE if escapes else SAFE,
            risk="another method may back-propagate the stored value",
        )
        self.report(value, self.message.format(acc=acc, value=code), fix=detach)

    def _in_forward(self) -> bool:
        """A module's `forward` keeps intermediate tensors on purpose: they are part of the output's graph
        (a memory of earlier steps, a list of per-layer outputs) that its caller back-propagates."""
        fn = self.ctx.current_function
        return fn is not None and fn.name.value == "forward" and self.ctx.in_module_class

    def _without_grad(self) -> bool:
        """Autograd is off here: a no_grad block or decorator, a function only called with autograd off,
        or a Lightning hook that Lightning runs under no_grad."""
        ctx = self.ctx
        if ctx.under_call(*NO_GRAD) or any(runs_without_grad(ctx, fn) for fn in ctx.functions):
            return True
        fn, cls = ctx.current_function, ctx.current_class
        return (
            fn is not None
            and cls is not None
            and fn.name.value in _LIGHTNING_NO_GRAD_HOOKS
            and any(ctx.qualname(b.value) == "lightning.pytorch.LightningModule" for b in cls.bases)
        )


def _on_device(value: cst.BaseExpression) -> cst.BaseExpression:
    """`out` for `out.cpu()`: a host copy is still a node of the graph (`.cpu()` is differentiable)."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "cpu":
        value = value.func.value
    return value


def _never_requires_grad(value: cst.BaseExpression) -> bool:
    """Indices, comparisons and integer casts: `out.argmax(1)`, `out.max(1)[1]`, `(out > 0)`."""
    if isinstance(value, cst.Comparison):
        return True
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
        return value.func.attr.value in _NO_GRAD_METHODS
    if isinstance(value, cst.Attribute):
        return value.attr.value == "indices"
    if isinstance(value, cst.Subscript) and isinstance(value.value, cst.Call):
        func = value.value.func
        index = value.slice[0].slice if len(value.slice) == 1 else None
        return (
            isinstance(func, cst.Attribute)
            and func.attr.value in _INDEX_PAIRS
            and isinstance(index, cst.Index)
            and isinstance(index.value, cst.Integer)
            and index.value.value == "1"
        )
    return False


def _stored_elsewhere(body: Body, acc: str) -> bool:
    """The container is assigned into an attribute or another container (it may be read elsewhere)."""
    for name, defs in body.defs.items():
        if "." not in name:
            continue
        for d in defs:
            if d.value is not None and any(dotted(n) == acc for n in (d.value, *iter_nodes(d.value))):
                return True
    return False
