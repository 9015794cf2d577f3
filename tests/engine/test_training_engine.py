"""The shared analyses behind the TL1xx rules: loop events and autograd def-use facts."""

from __future__ import annotations

import libcst as cst
import pytest

from torchlint.engine.context import FileContext
from torchlint.engine.core.walk import iter_nodes
from torchlint.engine.flow.graph_flow import Grad, body_of
from torchlint.engine.flow.loop_events import EventKind, backward_call, dominates, exclusive


def _context(src: str, function: str | None = None) -> FileContext:
    module = cst.parse_module(src)
    ctx = FileContext("t.py", src, module)
    ctx.scope = ctx.semantics.scope_for(module, None)
    if function is not None:
        fn = next(n for n in iter_nodes(module) if isinstance(n, cst.FunctionDef) and n.name.value == function)
        ctx.scope = ctx.semantics.scope_for(fn, ctx.scope)
        ctx.functions.append(fn)
    return ctx


def _first_loop(ctx: FileContext):
    return next(n for n in iter_nodes(ctx.module) if isinstance(n, (cst.For, cst.While)))


def _events(src: str, function: str | None = None):
    ctx = _context(src, function)
    return ctx.loop_analysis.events(_first_loop(ctx))


def test_events_in_order_with_branches_and_nested_loops():
    events = _events(
        """\
import torch
model = torch.nn.Linear(4, 2)
opt = torch.optim.SGD(params, lr=0.1)
sched = torch.optim.lr_scheduler.StepLR(opt, 3)
for epoch in range(3):
    model.train()
    for x, y in loader:
        opt.zero_grad()
        with torch.autocast("cuda"):
            loss = crit(model(x), y)
        loss.backward()
        if ok:
            opt.step()
        else:
            torch.cuda.empty_cache()
    sched.step()
    model.eval()
"""
    )
    kinds = [e.kind for e in events]
    assert kinds == [
        EventKind.TRAIN,
        EventKind.ZERO_GRAD,
        EventKind.BACKWARD,
        EventKind.STEP,
        EventKind.EMPTY_CACHE,
        EventKind.SCHED_STEP,
        EventKind.EVAL,
    ]
    train, zero, back, step, cache, sched, _ = events
    assert [e.depth for e in events] == [0, 1, 1, 1, 1, 0, 0]
    assert dominates(zero, step) and not dominates(step, zero)
    assert exclusive(step, cache) and not exclusive(back, step)
    assert any(arm == "if" for _, arm in step.path) and not any(arm != "body" for _, arm in back.path)
    assert sched.movable and not step.movable  # the step is nested in an `if`
    assert train.top is not zero.top and zero.top is back.top  # both inside the inner loop statement


@pytest.mark.parametrize(
    "call,retain,target",
    [
        ("loss.backward()", False, "loss"),
        ("loss.backward(retain_graph=True)", True, "loss"),
        ("loss.backward(None, True)", True, "loss"),
        ("loss.backward(torch.ones_like(loss))", False, "loss"),
        ("accelerator.backward(loss)", False, "loss"),
        ("self.manual_backward(loss, retain_graph=True)", True, "loss"),
        ("torch.autograd.backward(loss, retain_graph=False)", False, "loss"),
        ("scaler.scale(loss).backward()", False, "scaler.scale(loss)"),
    ],
)
def test_backward_events(call, retain, target):
    ctx = _context(
        "import torch\nfrom accelerate import Accelerator\naccelerator = Accelerator()\n"
        f"loss = torch.ones(1, requires_grad=True).sum()\nfor x in xs:\n    {call}\n"
    )
    (event,) = ctx.loop_analysis.events(_first_loop(ctx))
    assert event.kind is EventKind.BACKWARD
    assert ctx.module.code_for_node(event.target) == target
    tensor, retains = backward_call(event.node, lambda e: ctx.semantics.infer(e, ctx.scope))
    assert retains is retain and tensor is event.target


@pytest.mark.parametrize("call", ["accelerator.backward(loss)", "engine.backward(loss)", "out.backward(grad)"])
def test_a_backward_of_an_unknown_receiver_starts_from_an_unknown_tensor(call):
    # no name decides: `accelerator` may be an engine (backward(loss)) or a tensor (backward(gradient))
    ctx = _context(f"import torch\nfor x in xs:\n    {call}\n")
    (event,) = ctx.loop_analysis.events(_first_loop(ctx))
    assert event.kind is EventKind.BACKWARD
    assert backward_call(event.node, lambda e: ctx.semantics.infer(e, ctx.scope)) == (None, False)


def test_events_follow_local_helpers_in_their_own_scope():
    events = _events(
        """\
import torch
def update(net, optimiser):
    optimiser.step()
    net.eval()

model = torch.nn.Linear(4, 2)
opt = torch.optim.Adam(model.parameters())
for x in xs:
    model(x).sum().backward()
    update(model, opt)
"""
    )
    assert [e.kind for e in events] == [EventKind.BACKWARD, EventKind.STEP, EventKind.EVAL]
    assert events[1].via is not None and not events[1].movable


def _status(src: str, function: str, read: str) -> Grad:
    ctx = _context(src, function)
    body = body_of(ctx)
    node = next(
        n
        for n in iter_nodes(ctx.module)
        if isinstance(n, cst.Name)
        and n.value == read
        and body.index(n) is not None
        and ctx.module.code_for_node(n) == read
        and _is_last(ctx.module, n, read)
    )
    return body.grad_status(node, body.index(node))


def _is_last(module, node, name) -> bool:
    names = [n for n in iter_nodes(module) if isinstance(n, cst.Name) and n.value == name]
    return names[-1] is node


@pytest.mark.parametrize(
    "lines,expected",
    [
        (["w = torch.randn(3, requires_grad=True)"], Grad.LEAF),
        (["w = torch.randn(3, requires_grad=True) * 0.01"], Grad.NON_LEAF),
        (["w = torch.randn(3, requires_grad=True).cuda()"], Grad.NON_LEAF),
        (["w = (torch.randn(3) * 0.01).requires_grad_()"], Grad.LEAF),
        (["w = torch.zeros(3)", "w.requires_grad_()"], Grad.LEAF),
        (["w = torch.zeros(3)", "w.requires_grad = True"], Grad.LEAF),
        (["w = torch.nn.Parameter(torch.zeros(3))"], Grad.LEAF),
        (["w = model(x)"], Grad.NON_LEAF),
        (["w = model(x).detach()"], Grad.NONE),
        (["w = torch.zeros(3)"], Grad.NONE),
        (["w = make()"], Grad.UNKNOWN),
        (["with torch.no_grad():", "    w = model(x)"], Grad.NONE),
    ],
)
def test_grad_status(lines, expected):
    body = "\n".join("    " + line for line in lines)
    src = f"import torch\ndef f(model: torch.nn.Module, x):\n{body}\n    print(w)\n"
    assert _status(src, "f", "w") is expected


def test_graph_sharing_and_cuts():
    src = """\
import torch
crit = torch.nn.MSELoss()
def f(model: torch.nn.Module, x, y):
    out = model(x)
    a = crit(out, y)
    b = crit(out.detach(), y)
    c = out.sum()
    a.backward()
    b.backward()
    c.backward()
"""
    ctx = _context(src, "f")
    body = body_of(ctx)
    a, b, c = body.backwards
    shared_ac = body.graph_defs(a.target, a.index) & body.graph_defs(c.target, c.index)
    assert {d.name for d in shared_ac} == {"out"}
    assert not body.graph_defs(a.target, a.index) & body.graph_defs(b.target, b.index)


def test_feeds_backward():
    src = """\
def f(model, xs):
    losses = []
    logged = []
    for x in xs:
        loss = model(x).sum()
        losses.append(loss)
        logged.append(loss)
    total = torch.stack(losses).mean()
    total.backward()
    return float(logged[0])
"""
    body = body_of(_context(src, "f"))
    assert body.feeds_backward("losses") and not body.feeds_backward("logged")
