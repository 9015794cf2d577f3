"""TL116 discriminator-step-through-generator: Discriminator loss back-propagated through the generator's output (no .detach())"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.core.walk import iter_nodes
from torchlint.engine.flow.graph_flow import Backward, Body, body_of, graph_nodes, model_calls
from torchlint.engine.flow.loop_events import Event, EventKind
from torchlint.engine.rule import DISPLAY, SAFE, Invalid, Replace, Rule, fix
from torchlint.engine.semantic.kinds import NO_GRAD, Kind
from torchlint.engine.semantic.names import dotted
from torchlint.engine.torch.optimizer_params import optimized_models
from torchlint.findings import Severity

_SETUP = """\
import torch
from torch import nn

G = nn.Sequential(nn.Linear(16, 64), nn.Tanh())
D = nn.Sequential(nn.Linear(64, 1), nn.Sigmoid())
opt_G = torch.optim.Adam(G.parameters(), lr=2e-4)
opt_D = torch.optim.Adam(D.parameters(), lr=2e-4)
bce = nn.BCELoss()
"""


class DiscriminatorStepThroughGenerator(Rule):
    code = "TL116"
    analyses = frozenset(
        {
            Analysis.CALL_SITES,
            Analysis.GRAD_SWITCHES,
            Analysis.GRAPH_BODIES,
            Analysis.KINDS,
            Analysis.LOCAL_FUNCTIONS,
            Analysis.LOOP_ANALYSIS,
            Analysis.OWN_SUMMARY,
            Analysis.SCOPES,
            Analysis.VALUES,
        }
    )
    requires = ("backward",)
    name = "discriminator-step-through-generator"
    message = "the discriminator loss `{loss}` back-propagates through `{fake}` into the generator `{gen}`: {effect}; use `{fake}.detach()` in the discriminator's term"
    severity = Severity.ERROR
    category = "correctness"
    summary = "Discriminator loss back-propagated through the generator's output (no .detach())"
    what = (
        "Flags the backward pass of a GAN's discriminator step whose loss is computed on the generator's "
        "output without `.detach()`. The evidence is structural: two models, an optimizer built over "
        "each one's `parameters()`, a loss that runs the discriminator on what the generator produced, "
        "a `backward()` followed by the discriminator optimizer's `step()`, and a step of the "
        "generator's optimizer in the same loop (or step function). An error when nothing clears the "
        "generator's gradients between that backward and the generator's step; a warning when they are "
        "cleared first (`opt_G.zero_grad()`, `G.zero_grad()`)."
    )
    why = (
        "Without `.detach()` the discriminator's backward runs on through the generator and adds "
        "gradients to its parameters. When the generator's step comes next without a `zero_grad()`, "
        "the generator is updated with the discriminator's loss too: the gradient that pushes it to "
        "fool the discriminator is mixed with one that pushes it the other way, and training quietly "
        "degrades. When its gradients are cleared first the result is right but every discriminator "
        "step pays for a backward pass through the generator that is thrown away (time and memory)."
    )
    example = (
        _SETUP
        + """
for real, z in loader:
    opt_G.zero_grad()
    fake = G(z)
    opt_D.zero_grad()
    d_loss = bce(D(real), torch.ones(len(real), 1)) + bce(D(fake), torch.zeros(len(z), 1))
    d_loss.backward(retain_graph=True)
    opt_D.step()
    g_loss = bce(D(fake), torch.ones(len(z), 1))
    g_loss.backward()
    opt_G.step()
"""
    )
    fix_example = (
        _SETUP
        + """
for real, z in loader:
    opt_G.zero_grad()
    fake = G(z)
    opt_D.zero_grad()
    d_loss = bce(D(real), torch.ones(len(real), 1)) + bce(D(fake.detach()), torch.zeros(len(z), 1))
    d_loss.backward(retain_graph=True)
    opt_D.step()
    g_loss = bce(D(fake), torch.ones(len(z), 1))
    g_loss.backward()
    opt_G.step()
"""
    )
    fix_safety = (
        "Replaces each use of the generator's output in the discriminator loss with `fake.detach()`. "
        "The discriminator's gradients do not change (its parameters never depended on the generator's "
        "output), only the gradients that leaked into the generator disappear, so the fix is safe when "
        "the edited expressions feed no other backward and no `torch.autograd.grad` takes a gradient with "
        "respect to them (a W-div penalty needs `fake` in the graph: there `fake = G(z).detach()"
        ".requires_grad_()` is the fix, display-only). When one of them does (the discriminator's "
        "output on `fake` is computed once and also used for the generator's loss), detaching it would "
        "stop the generator from learning: the fix is display-only there, and the discriminator must be "
        "run twice, once on `fake.detach()`."
    )
    VALID = [
        # the discriminator sees a detached copy
        _SETUP
        + """
for real, z in loader:
    fake = G(z)
    opt_D.zero_grad()
    d_loss = bce(D(real), torch.ones(len(real), 1)) + bce(D(fake.detach()), torch.zeros(len(z), 1))
    d_loss.backward()
    opt_D.step()
    opt_G.zero_grad()
    bce(D(fake), torch.ones(len(z), 1)).backward()
    opt_G.step()
""",
        # a separate fake batch, generated with autograd off
        _SETUP
        + """
for real, z in loader:
    with torch.no_grad():
        fake_for_d = G(z)
    opt_D.zero_grad()
    bce(D(fake_for_d), torch.zeros(len(z), 1)).backward()
    opt_D.step()
    opt_G.zero_grad()
    bce(D(G(z)), torch.ones(len(z), 1)).backward()
    opt_G.step()
""",
        # the generator is frozen during the discriminator's step
        _SETUP
        + """
for real, z in loader:
    G.requires_grad_(False)
    opt_D.zero_grad()
    bce(D(G(z)), torch.zeros(len(z), 1)).backward()
    opt_D.step()
    G.requires_grad_(True)
    opt_G.zero_grad()
    bce(D(G(z)), torch.ones(len(z), 1)).backward()
    opt_G.step()
""",
        # the generator's own step: its loss runs through the discriminator on purpose
        _SETUP
        + """
for real, z in loader:
    opt_G.zero_grad()
    g_loss = bce(D(G(z)), torch.ones(len(z), 1))
    g_loss.backward()
    opt_G.step()
""",
        # one optimizer over both networks: not two separately stepped models
        """\
import torch
from torch import nn

G = nn.Linear(16, 64)
D = nn.Linear(64, 1)
opt = torch.optim.Adam(list(G.parameters()) + list(D.parameters()))
for z in loader:
    opt.zero_grad()
    D(G(z)).mean().backward()
    opt.step()
""",
    ]
    INVALID = [
        Invalid(
            example,
            line=14,
            fixed=fix_example,
        ),
        # the generator's gradients are cleared before its step: a wasted backward, not a wrong update
        Invalid(
            _SETUP
            + """
for real, z in loader:
    fake = G(z)
    opt_D.zero_grad()
    d_loss = bce(D(fake), torch.zeros(len(z), 1))
    d_loss.backward()
    opt_D.step()
    opt_G.zero_grad()
    g_loss = bce(D(G(z)), torch.ones(len(z), 1))
    g_loss.backward()
    opt_G.step()
""",
            line=13,
            message="the discriminator loss `d_loss` back-propagates through `fake` into the generator `G`: "
            "a backward pass through the generator that is thrown away (its gradients are cleared before "
            "its step); use `fake.detach()` in the discriminator's term",
            fixed=_SETUP
            + """
for real, z in loader:
    fake = G(z)
    opt_D.zero_grad()
    d_loss = bce(D(fake.detach()), torch.zeros(len(z), 1))
    d_loss.backward()
    opt_D.step()
    opt_G.zero_grad()
    g_loss = bce(D(G(z)), torch.ones(len(z), 1))
    g_loss.backward()
    opt_G.step()
""",
        ),
        # the discriminator's output on `fake` also feeds the generator's loss: detaching it would stop
        # the generator from learning, so the fix is only shown
        Invalid(
            _SETUP
            + """
for real, z in loader:
    opt_D.zero_grad()
    opt_G.zero_grad()
    out = D(G(z))
    d_loss = bce(out, torch.zeros(len(z), 1))
    d_loss.backward(retain_graph=True)
    opt_D.step()
    opt_G.zero_grad()
    bce(out, torch.ones(len(z), 1)).backward()
    opt_G.step()
""",
            line=13,
            fixed=_SETUP
            + """
for real, z in loader:
    opt_D.zero_grad()
    opt_G.zero_grad()
    out = D(G(z).detach())
    d_loss = bce(out, torch.zeros(len(z), 1))
    d_loss.backward(retain_graph=True)
    opt_D.step()
    opt_G.zero_grad()
    bce(out, torch.ones(len(z), 1)).backward()
    opt_G.step()
""",
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        if not isinstance(node.func, cst.Attribute) or node.func.attr.value != "backward":
            return
        ctx = self.ctx
        body = body_of(ctx)
        backward = next((b for b in body.backwards if b.call is node), None)
        if backward is None or backward.target is None or ctx.under_call(*NO_GRAD):
            return
        events = self._events(body)
        at = next((i for i, e in enumerate(events) if e.node is node), None)
        if at is None:
            return
        step = next((e for e in events[at + 1 :] if e.kind is EventKind.STEP), None)
        if step is None or step.target is None:
            return
        stepped = {dotted(e.target) for e in events if e.kind is EventKind.STEP and e.target is not None}
        if len(stepped - {None}) < 2:
            return  # one optimizer: no other network's update for this backward to reach
        d_models = optimized_models(ctx, step.target)
        g_optimizers = {
            name: models
            for e in events
            if e.kind is EventKind.STEP and e.target is not None and (name := dotted(e.target)) is not None
            for models in [optimized_models(ctx, e.target)]
            if models and not models & d_models
        }
        sources = model_calls(body, backward.target, backward.index)
        if not d_models or not g_optimizers or not any(_model(c) in d_models for c in sources):
            return
        generated = [c for c in sources if any(_model(c) in m for m in g_optimizers.values())]
        if not _feeds_discriminator(body, sources, generated, d_models):
            return
        gen = _model(generated[0])
        assert gen is not None
        if self._frozen(gen):
            return
        uses = _uses(body, backward, generated, d_models)
        if not uses:
            return
        cleared = _cleared_first(events, at, {o for o, m in g_optimizers.items() if gen in m}, self._others(gen))
        effect = (
            "a backward pass through the generator that is thrown away (its gradients are cleared before its step)"
            if cleared
            else "nothing clears the generator's gradients before its step, so its update includes the discriminator's loss"
        )
        code = ctx.module.code_for_node
        first = uses[0]
        message = self.message.format(loss=code(backward.target), fake=code(first), gen=gen, effect=effect)
        edits = [Replace(u, code(u) + ".detach()") for u in uses]
        shared = _feeds_other_backward(body, backward, uses) or self._differentiated(body, uses)
        detach = fix(
            "Detach the generator's output in the discriminator loss", *edits, applicability=DISPLAY if shared else SAFE
        )
        self.report(first, message, fix=detach, severity=Severity.WARNING if cleared else None)

    def _differentiated(self, body: Body, uses: list[cst.BaseExpression]) -> bool:
        """A `torch.autograd.grad(...)` of this body names one of the edited values (a W-div penalty takes
        the gradient with respect to `fake`): detaching it there would cut `fake` out of that graph."""
        names = {dotted(u) for u in uses} - {None}
        return any(
            isinstance(n, cst.Call)
            and self.ctx.qualname(n.func) == "torch.autograd.grad"
            and any(_mentions(a.value, name) for a in n.args for name in names if name is not None)
            for n in iter_nodes(body.node, into_functions=False)
        )

    def _others(self, gen: str) -> Callable[[Event], bool]:
        """Whether a gradient clearing provably leaves the generator's gradients alone: it clears another
        model (`D.zero_grad()`) or an optimizer built over other models only."""

        def other(e: Event) -> bool:
            if e.target is None:
                return False
            name = dotted(e.target)
            if name is not None and _owner(e.target) != gen and self.ctx.kind(e.target) & Kind.MODEL:
                return True
            models = optimized_models(self.ctx, e.target)
            return bool(models) and gen not in models

        return other

    def _events(self, body: Body) -> list[Event]:
        """The events of the innermost loop of this body, else of the step function the body is."""
        ctx = self.ctx
        loops = [lp for lp in ctx.loops if body.index(lp) is not None]
        if loops:
            return ctx.loop_analysis.events(loops[-1])
        fn = ctx.current_function
        return ctx.loop_analysis.body_events(fn) if fn is not None else []

    def _frozen(self, gen: str) -> bool:
        """The generator's `requires_grad` is switched anywhere in the file (`G.requires_grad_(False)`,
        `for p in G.parameters(): p.requires_grad = False`, or a helper of this file handed `G` that
        sets it): which parts are frozen during which step is then not for us to judge."""
        switches = self.ctx.grad_switches
        if any(_owner(c.func.value) == gen for c in switches.calls if isinstance(c.func, cst.Attribute)):
            return True
        if any(_mentions(loop.iter, gen) for loop in switches.loops):
            return True
        helpers = {name for name, fn in self.ctx.local_functions().items() if id(fn) in switches.functions}
        return bool(helpers) and any(
            _local_name(site.call.func) in helpers and _mentions(site.call, gen) for site in self.ctx.call_sites.calls
        )


def _model(call: cst.Call) -> str | None:
    """The dotted name of the model a forward call runs (`D` for `D(x)` and `D.forward(x)`)."""
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value == "forward":
        func = func.value
    return dotted(func)


def _owner(expr: cst.BaseExpression) -> str | None:
    """`G` for `G`, `G.decoder`, `G.module` (`self.G` for `self.G.decoder`): the model a chain starts from."""
    name = dotted(expr)
    if name is None:
        return None
    parts = name.split(".")
    return ".".join(parts[:2] if parts[0] == "self" and len(parts) > 1 else parts[:1])


def _local_name(func: cst.BaseExpression) -> str | None:
    """`f` for `f(...)` and `self.f(...)`: how a call names a function of this file."""
    name = dotted(func)
    return name[5:] if name is not None and name.startswith("self.") and name.count(".") == 1 else name


def _mentions(node: cst.CSTNode, name: str) -> bool:
    return any(dotted(n) == name for n in (node, *iter_nodes(node)) if isinstance(n, (cst.Name, cst.Attribute)))


def _uses(
    body: Body, backward: Backward, generated: list[cst.Call], d_models: frozenset[str]
) -> list[cst.BaseExpression]:
    """Where the generator's output enters the loss's graph, in source order: each graph-carrying use
    of a name bound to the generator's output (not yet through the discriminator), and each generator
    call written inline elsewhere."""
    assert backward.target is not None
    calls = {id(c) for c in generated}

    def runs(e: cst.CSTNode, models: frozenset[str] | None) -> bool:
        return any(
            isinstance(n, cst.Call)
            and (id(n) in calls if models is None else body.is_forward(n) and _model(n) in models)
            for n in graph_nodes(e)
        )

    defs = sorted(body.graph_defs(backward.target, backward.index), key=lambda d: d.index)
    gen_defs = {d for d in defs if d.value is not None and runs(d.value, None) and not runs(d.value, d_models)}
    names = {d.name for d in gen_defs}
    found: list[cst.BaseExpression] = []
    for e in [*(d.value for d in defs if d not in gen_defs and d.value is not None), backward.target]:
        carried = {id(n) for n in graph_nodes(e)}
        for n in (e, *iter_nodes(e, into_functions=False)):
            if id(n) not in carried:
                continue
            if (
                isinstance(n, cst.Call)
                and id(n) in calls
                or isinstance(n, (cst.Name, cst.Attribute))
                and dotted(n) in names
            ):
                found.append(n)
    return found


def _feeds_discriminator(
    body: Body, sources: list[cst.Call], generated: list[cst.Call], d_models: frozenset[str]
) -> bool:
    """A generator call's graph reaches the input of a discriminator call: `D(G(z))`, `D(fake)`."""
    ids = {id(c) for c in generated}
    for c in sources:
        at = body.index(c)
        if _model(c) in d_models and at is not None:
            if any(id(g) in ids for a in c.args for g in model_calls(body, a.value, at)):
                return True
    return False


def _feeds_other_backward(body: Body, backward: Backward, uses: list[cst.BaseExpression]) -> bool:
    """An edited expression also reaches another backward (the generator's loss reuses `D(fake)`)."""
    for other in body.backwards:
        if other is backward or other.target is None:
            continue
        exprs = [other.target, *(d.value for d in body.graph_defs(other.target, other.index) if d.value is not None)]
        if any(n is u for e in exprs for n in (e, *iter_nodes(e)) for u in uses):
            return True
    return False


def _cleared_first(events: list[Event], at: int, optimizers: set[str], others: Callable[[Event], bool]) -> bool:
    """Going on from the backward at `events[at]` (round the loop), a gradient clearing that may reach the
    generator (any but those `others` proves are another model's) comes before the step of one of the
    generator's `optimizers` (or no such step comes)."""
    for e in events[at + 1 :] + events[:at]:
        if e.kind is EventKind.ZERO_GRAD and not others(e):
            return True
        if e.kind is EventKind.STEP and e.target is not None and dotted(e.target) in optimizers:
            return False
    return True
