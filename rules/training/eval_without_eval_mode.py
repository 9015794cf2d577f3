"""TL115 eval-without-eval-mode: an evaluation pass under no_grad while the model is still in training mode"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.core.callargs import get_arg
from torchlint.engine.core.walk import iter_nodes, iter_statements
from torchlint.engine.flow.loop_events import EventKind, backward_call
from torchlint.engine.rule import SAFE, InsertAfter, InsertBefore, Invalid, NodeEdit, NodeFix, Rule, fix
from torchlint.engine.semantic.kinds import NO_GRAD, Kind
from torchlint.engine.semantic.names import dotted
from torchlint.engine.semantic.values import current_where
from torchlint.engine.torch.model_mode import evaluation_parameters, in_training_mode, mode_dependent
from torchlint.findings import Severity


class EvalWithoutEvalMode(Rule):
    code = "TL115"
    analyses = frozenset(
        {
            Analysis.CALL_SITES,
            Analysis.EVALUATION_HELPERS,
            Analysis.KINDS,
            Analysis.LOCAL_FUNCTIONS,
            Analysis.LOOP_ANALYSIS,
            Analysis.OWN_SUMMARY,
            Analysis.SCOPES,
            Analysis.VALUES,
        }
    )
    requires = ("torch",)  # not `no_grad`: a validation helper of another project file may hold it
    name = "eval-without-eval-mode"
    message = (
        "`{model}` is evaluated {how} but is still in training mode: its dropout stays active and "
        "batch norm uses (and updates) batch statistics; call `{model}.eval()` before the pass"
    )
    severity = Severity.WARNING
    category = "correctness"
    summary = "An evaluation pass under no_grad while the model is still in training mode"
    what = (
        "Flags an evaluation pass — a `with torch.no_grad():` / `torch.inference_mode()` block that calls a model "
        "and is not part of a training step, or a call of a validation function that runs its model argument "
        "that way — when the model is proven to be in training mode there and has layers whose behaviour depends "
        "on the mode. Training mode is proven from the function itself: the model was built there (modules start "
        "in training mode), or switched by `.train()` and trained before the pass; and nothing that may switch it "
        "(`.eval()`, `.train(False)`, `.apply(...)`, a helper that receives it) reaches the pass. Mode-dependent "
        "layers are `Dropout`, `BatchNorm`, recurrent and transformer layers with dropout, project layers whose "
        "code reads `self.training`, and the torchvision models built of them, seen through this file's and the "
        "project's classes. A `no_grad` block inside a training step (a target network, a teacher, sampling for "
        "the discriminator) is not an evaluation pass."
    )
    why = (
        "`torch.no_grad()` only stops gradient tracking; it does not change what layers compute. In training mode "
        "dropout still zeroes activations at random and batch norm normalises each batch with its own statistics "
        "(and overwrites the running averages with the validation data), so validation scores are noisy and "
        "pessimistic and the checkpoint chosen by them is wrong. "
        "A warning, not an error: the evidence is static — a model built outside the function, or a mode "
        "switched by code the analysis cannot read, leaves the rule silent, but what it proves could still be "
        "intended (a Monte-Carlo dropout estimate)."
    )
    example = """\
import torch

model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Dropout(0.2), torch.nn.Linear(8, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

for epoch in range(10):
    model.train()
    for x, y in train_loader:
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    with torch.no_grad():
        accuracy = sum((model(x).argmax(1) == y).sum().item() for x, y in val_loader)
"""
    fix_example = """\
import torch

model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Dropout(0.2), torch.nn.Linear(8, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

for epoch in range(10):
    model.train()
    for x, y in train_loader:
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        accuracy = sum((model(x).argmax(1) == y).sum().item() for x, y in val_loader)
"""
    fix_safety = (
        "Safe: inserts `model.eval()` before the pass, and `model.train()` after it when the pass sits in a loop "
        "that trains and that loop never switches the model back to training mode itself (so the next epoch "
        "does not train in eval mode, TL111)."
    )
    VALID = [
        # eval mode set before the pass
        """\
import torch
model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.5))
model.eval()
with torch.no_grad():
    print(model(x))
""",
        """\
import torch
model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.BatchNorm1d(4))
model.train(False)
with torch.inference_mode():
    print(model(x))
""",
        # no layer depends on the mode
        """\
import torch
model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
with torch.no_grad():
    print(model(x))
""",
        # the helper switches the model itself
        """\
import torch

def evaluate(model, loader):
    model.eval()
    with torch.no_grad():
        return [model(x) for x in loader]

model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.5))
print(evaluate(model, loader))
""",
        # no_grad inside a training step: a target network, not an evaluation pass
        """\
import torch
net = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.1))
target = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.1))
opt = torch.optim.Adam(net.parameters())
for s, s2 in loader:
    with torch.no_grad():
        goal = target(s2)
    opt.zero_grad()
    torch.nn.functional.mse_loss(net(s), goal).backward()
    opt.step()
""",
        # an EMA update under no_grad calls no model
        """\
import torch
model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.1))
ema = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.1))
with torch.no_grad():
    for e, p in zip(ema.parameters(), model.parameters()):
        e.mul_(0.99).add_(p, alpha=0.01)
""",
        # Lightning switches modes around validation_step
        """\
import torch
import lightning.pytorch as pl

class Net(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.1))

    def validation_step(self, batch, batch_idx):
        with torch.no_grad():
            return self.body(batch).sum()
""",
        # a model the function did not build: its mode is the caller's business
        """\
import torch

def predict(model, x):
    with torch.no_grad():
        return model(x)
""",
    ]
    INVALID = [
        Invalid(
            """\
import torch
model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.BatchNorm1d(4))
with torch.no_grad():
    print(model(x))
""",
            line=3,
            fixed="""\
import torch
model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.BatchNorm1d(4))
model.eval()
with torch.no_grad():
    print(model(x))
""",
        ),
        # validation inside the epoch loop, which never switches back: eval before, train after
        Invalid(
            """\
import torch
model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.5))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(3):
    for x, y in loader:
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
    with torch.no_grad():
        print(model(val_x))
""",
            line=9,
            fixed="""\
import torch
model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.5))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(3):
    for x, y in loader:
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        print(model(val_x))
    model.train()
""",
        ),
        # a validation helper that leaves the mode to its caller, called in training mode
        Invalid(
            """\
import torch

@torch.no_grad()
def evaluate(net, loader):
    return sum(net(x).sum() for x in loader)

def fit(model, opt, loader):
    for epoch in range(3):
        model.train()
        for x in loader:
            opt.zero_grad()
            model(x).sum().backward()
            opt.step()
        print(evaluate(model, loader))

fit(torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.5)), opt, loader)
""",
            line=14,
            fixed="""\
import torch

@torch.no_grad()
def evaluate(net, loader):
    return sum(net(x).sum() for x in loader)

def fit(model, opt, loader):
    for epoch in range(3):
        model.train()
        for x in loader:
            opt.zero_grad()
            model(x).sum().backward()
            opt.step()
        model.eval()
        print(evaluate(model, loader))

fit(torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.5)), opt, loader)
""",
        ),
    ]

    def visit_With(self, node: cst.With) -> None:
        guard = next((self._guard(i.item) for i in node.items if self._guard(i.item)), None)
        if guard is None or any(w is not node and any(self._guard(i.item) for i in w.items) for w in self.ctx.withs):
            return
        calls = [n for n in iter_nodes(node.body) if isinstance(n, cst.Call)]
        if any(backward_call(c, self.ctx.kind) is not None for c in calls) or self._in_training_step(node):
            return
        seen = set()
        for call in calls:
            model = self._model_called(call)
            name = dotted(model) if model is not None else None
            if model is None or name is None or name in seen:
                continue
            seen.add(name)
            if self._in_training_mode(model, node):
                self.report(
                    node.items[0].item,
                    self.message.format(model=name, how=f"under `{guard}`"),
                    fix=self._fix(node, name),
                )

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not node.args or not (type(func) is cst.Name or type(func) is cst.Attribute):
            return
        helpers = self.ctx.evaluation_helpers  # the cheap test first: most calls are of no such helper
        if (func.value if type(func) is cst.Name else None) not in helpers and self.ctx.qualname(func) not in helpers:
            return
        if not any(dotted(a.value) is not None and self.ctx.kind(a.value) & Kind.MODEL for a in node.args):
            return  # no model handed over by name: not a validation helper's call we can follow
        for index, param in evaluation_parameters(self.ctx, node.func):
            arg = get_arg(node, param, index)
            name = dotted(arg.value) if arg is not None else None
            if arg is None or name is None or not self.ctx.kind(arg.value) & Kind.MODEL:
                continue
            stmt = self._statement(node)
            if stmt is not None and self._in_training_mode(arg.value, node):
                how = f"by `{dotted(node.func)}(...)`, which runs it without gradients,"
                self.report(node, self.message.format(model=name, how=how), fix=self._fix(stmt, name))

    def _guard(self, item: cst.BaseExpression) -> str | None:
        """`torch.no_grad()` / `torch.inference_mode()` as the code spells it."""
        func = item.func if isinstance(item, cst.Call) else item
        return f"{dotted(func)}()" if self.ctx.qualname(func) in NO_GRAD else None

    def _model_called(self, call: cst.Call) -> cst.BaseExpression | None:
        """The module a call runs: `model(x)` or `model.forward(x)`."""
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "forward":
            func = func.value
        kind = self.ctx.kind(func) if isinstance(func, (cst.Name, cst.Attribute)) else Kind.NONE
        return func if kind & Kind.MODEL and not kind & Kind.CRITERION else None

    def _in_training_step(self, node: cst.With) -> bool:
        """The block runs inside a step that back-propagates (its innermost loop's own iteration, or a
        loop-free function): a target network, a teacher or a sample for the other model of a GAN."""
        loops = self.ctx.own_loops
        if loops:
            events = self.ctx.loop_analysis.events(loops[-1])
            return any(e.kind is EventKind.BACKWARD and e.depth == 0 for e in events)
        fn = self.ctx.current_function
        return any(
            (site.chain[-1] if site.chain else None) is fn
            and not site.in_loop
            and not site.in_lambda
            and backward_call(site.call, self.ctx.kind) is not None
            for site in self.ctx.call_sites.calls
        )

    def _in_training_mode(self, model: cst.BaseExpression, point: cst.CSTNode) -> bool:
        where = current_where(self.ctx)
        if not in_training_mode(self.ctx, model, point, where):
            return False
        built = self.ctx.values.builder(model, where)
        return built is not None and mode_dependent(self.ctx, built[0])

    def _statement(self, node: cst.CSTNode) -> cst.SimpleStatementLine | None:
        """The statement line holding `node`, in the current function or at module level."""
        fn = self.ctx.current_function
        if fn is not None and type(fn.body) is not cst.IndentedBlock:
            return None  # a one-line function
        stmts = iter_statements(self.ctx.body_statements)
        return next(
            (s for s in stmts if isinstance(s, cst.SimpleStatementLine) and any(n is node for n in iter_nodes(s))),
            None,
        )

    def _fix(self, stmt: cst.BaseStatement, model: str) -> NodeFix:
        """`model.eval()` before the pass; `model.train()` after it when a loop around it trains and never
        switches back itself."""
        edits: list[NodeEdit] = [InsertBefore(stmt, f"{model}.eval()")]
        for loop in self.ctx.own_loops:
            events = self.ctx.loop_analysis.events(loop)
            if any(e.kind is EventKind.BACKWARD for e in events) and not any(
                e.kind is EventKind.TRAIN and dotted(e.target) == model for e in events if e.target is not None
            ):
                edits.append(InsertAfter(stmt, f"{model}.train()"))
                break
        return fix(f"Call `{model}.eval()` before the pass", *edits, applicability=SAFE)
