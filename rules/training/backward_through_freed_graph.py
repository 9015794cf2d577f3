"""TL107 backward-through-freed-graph: Second backward() through a graph an earlier backward() freed"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.core.call_binding import bind, signature
from torchlint.engine.core.callargs import with_keyword
from torchlint.engine.flow.graph_flow import body_of
from torchlint.engine.flow.loop_events import exclusive
from torchlint.engine.rule import SAFE, Invalid, Replace, Rule, fix
from torchlint.findings import Severity

from ..legacy._signatures import TORCH


class BackwardThroughFreedGraph(Rule):
    code = "TL107"
    analyses = frozenset({Analysis.CALL_SITES, Analysis.GRAPH_BODIES, Analysis.OWN_SUMMARY, Analysis.SCOPES})
    requires = ("backward",)
    name = "backward-through-freed-graph"
    message = "this `backward()` frees the graph of `{shared}`, which {later} back-propagates through again: pass `retain_graph=True` here (or sum the losses)"
    severity = Severity.ERROR
    category = "correctness"
    opt_in = (
        "Measured on 94 public repositories it was not tuned on (bench/realworld, six sets unseen at 2026-12-03 "
        "and 2026-12-04), 0 of its 5 findings were right: 2 were wrong (a GAN step that regenerates its fake "
        "batch before the generator's backward, since fixed) and 3 debatable: a lesson that raises the error on "
        "purpose inside `try`, and an exercise cell whose graph-building code is left for the student. Real "
        "double backwards fail loudly on their first run, so the rule adds little in training code that runs; "
        "select it to catch them before a long job starts."
    )
    summary = "Second backward() through a graph an earlier backward() freed"
    what = (
        "Flags a `backward()` without `retain_graph=True` when another backward pass later goes "
        "through part of the same graph: two losses built from one forward pass, or a backward "
        "inside a loop through a tensor computed once before the loop. A graph starts at a model call "
        "or at an operation on a tensor that requires grad (`requires_grad=True`, `.requires_grad_()`); "
        "the leaf itself holds no graph, so reusing it is fine. A shared graph built only from sums, additions and "
        "views (`x.sum()`, `x + y`, `x.view(...)`) keeps no tensor for its backward, so a second pass through it "
        "works and is not flagged."
    )
    why = (
        "By default `backward()` frees the intermediate buffers of the graph it traverses. A second "
        "backward through any part of that graph fails with `RuntimeError: Trying to backward through "
        "the graph a second time`. Summing the losses and calling `backward()` once is usually the "
        "better fix (one traversal); `retain_graph=True` keeps the buffers alive until the last pass."
    )
    example = """\
import torch

backbone = torch.nn.Linear(16, 8)
cls_head, box_head = torch.nn.Linear(8, 3), torch.nn.Linear(8, 4)
criterion, box_loss = torch.nn.CrossEntropyLoss(), torch.nn.SmoothL1Loss()

features = backbone(images)
loss_cls = criterion(cls_head(features), labels)
loss_box = box_loss(box_head(features), boxes)
loss_cls.backward()
loss_box.backward()
"""
    fix_example = """\
import torch

backbone = torch.nn.Linear(16, 8)
cls_head, box_head = torch.nn.Linear(8, 3), torch.nn.Linear(8, 4)
criterion, box_loss = torch.nn.CrossEntropyLoss(), torch.nn.SmoothL1Loss()

features = backbone(images)
loss_cls = criterion(cls_head(features), labels)
loss_box = box_loss(box_head(features), boxes)
(loss_cls + loss_box).backward()
"""
    fix_safety = (
        "Safe: adds `retain_graph=True` to this `backward()` (replacing a removed `retain_variables=`), so the "
        "second backward runs instead of raising; no fix when `retain_graph` may be passed unseen (`*args`, "
        "`**kwargs`, a second positional argument). The graph's buffers stay alive until the last backward, raising peak memory; summing "
        "the losses into one backward is cheaper when you can restructure the code."
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
        # a leaf that requires grad holds no graph: each iteration builds a new one from it
        """\
import torch
w = torch.randn(4, 1, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
for x, y in loader:
    loss = (x @ w - y).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
        # two losses from one leaf, each with its own graph
        """\
import torch
w = torch.zeros(3, requires_grad=True)
params = [w]
(w * 2).sum().backward()
(params[0] ** 2).sum().backward()
""",
        # a graph of sums, additions and views keeps no tensor for its backward: nothing to free
        """\
import torch
x = torch.randn(4, requires_grad=True)
y = (x + 1).sum()
y.backward()
y.backward()
""",
        # the product was computed without recording a graph
        """\
import torch
w = torch.randn(4, 1, requires_grad=True)
with torch.no_grad():
    out = x @ w
out.sum().backward()
out.mean().backward()
""",
    ]
    INVALID = [
        Invalid(
            """\
import torch
model = torch.nn.Linear(4, 2)
criterion = torch.nn.MSELoss()
out = model(x)
for target in targets:
    loss = criterion(out, target)
    loss.backward()
""",
            line=7,
            fixed="""\
import torch
model = torch.nn.Linear(4, 2)
criterion = torch.nn.MSELoss()
out = model(x)
for target in targets:
    loss = criterion(out, target)
    loss.backward(retain_graph=True)
""",
        ),
        # a graph that starts at a tensor created with requires_grad=True
        Invalid(
            """\
import torch
w = torch.randn(4, 1, requires_grad=True)
out = x @ w
loss = (out - y).pow(2).mean()
loss.backward()
loss.backward()
""",
            line=5,
            fixed="""\
import torch
w = torch.randn(4, 1, requires_grad=True)
out = x @ w
loss = (out - y).pow(2).mean()
loss.backward(retain_graph=True)
loss.backward()
""",
        ),
        # ... or at one made a leaf by requires_grad_()
        Invalid(
            """\
import torch
def probe(x, targets):
    x.requires_grad_()
    features = torch.tanh(x)
    for t in targets:
        (features - t).abs().mean().backward()
""",
            line=6,
            fixed="""\
import torch
def probe(x, targets):
    x.requires_grad_()
    features = torch.tanh(x)
    for t in targets:
        (features - t).abs().mean().backward(retain_graph=True)
""",
        ),
        Invalid(
            """\
import torch
criterion = torch.nn.CrossEntropyLoss()
def train_step(model: torch.nn.Module, x, y):
    logits = model(x)
    ce = criterion(logits, y)
    reg = logits.pow(2).mean()
    ce.backward()
    reg.backward()
""",
            line=7,
            fixed="""\
import torch
criterion = torch.nn.CrossEntropyLoss()
def train_step(model: torch.nn.Module, x, y):
    logits = model(x)
    ce = criterion(logits, y)
    reg = logits.pow(2).mean()
    ce.backward(retain_graph=True)
    reg.backward()
""",
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        if not isinstance(node.func, cst.Attribute) or node.func.attr.value not in ("backward", "manual_backward"):
            return
        body = body_of(self.ctx)
        me = next((b for b in body.backwards if b.call is node), None)
        if me is None or me.retain or me.target is None:
            return
        mine = body.graph_defs(me.target, me.index, leaves=True)
        if not mine:
            return
        outside = body.bound_before_its_loop(me, mine)  # freed in the first iteration, read in the next
        if outside and body.saves_tensors(outside):
            return self._report(node, min(outside, key=lambda d: d.index).name, "the next iteration")
        for other in body.backwards:
            if other.index <= me.index or exclusive(me, other) or other.target is None:
                continue
            shared = mine & body.graph_defs(other.target, other.index, leaves=True)
            stale = body.bound_before_its_loop(other, shared)
            if stale and not other.retain and body.saves_tensors(stale):
                continue  # the later loop fails on its own second iteration (reported there): not fixed here
            if shared and body.saves_tensors(shared):  # a graph of sums and views has nothing to free
                name = min(shared, key=lambda d: d.index).name
                return self._report(node, name, f"`{self.ctx.module.code_for_node(other.call)}`")

    def _report(self, node: cst.Call, shared: str, later: str) -> None:
        new = _retaining(node)
        edit = fix("Pass `retain_graph=True`", Replace(node, new), applicability=SAFE) if new is not None else None
        self.report(node, self.message.format(shared=shared, later=later), fix=edit)


def _retaining(call: cst.Call) -> cst.Call | None:
    """`call` with `retain_graph=True`. The removed `retain_variables=` (a TypeError since 0.4) becomes it.
    The arguments are bound to `Tensor.backward`'s signature (Lightning's `manual_backward(loss, ...)`
    passes the rest on to it); None when the binding is not certain (`*args`, `**kwargs`, a keyword it
    does not take) or binds `retain_graph` already (`loss.backward(gradient, False)`)."""
    removed = [a for a in call.args if a.keyword is not None and a.keyword.value == "retain_variables"]
    renamed = call.with_changes(
        args=[
            a.with_changes(keyword=cst.Name("retain_graph"), value=cst.Name("True")) if a in removed else a
            for a in call.args
        ]
    )
    passed = renamed.args
    if isinstance(call.func, cst.Attribute) and call.func.attr.value == "manual_backward":
        passed = passed[1:] if passed and passed[0].keyword is None else ()
    bound = bind(renamed.with_changes(args=passed), signature(TORCH["torch.Tensor.backward"]))
    if bound is None:
        return None
    if removed:
        return renamed
    return None if "retain_graph" in bound else with_keyword(call, "retain_graph", "True")
