"""TL605 state-dict-snapshot-aliased: `best = model.state_dict()` kept as a snapshot while training goes on"""

from __future__ import annotations

from collections.abc import Iterable

import libcst as cst

from torchlint.engine.context import FileContext
from torchlint.engine.core.analyses import Analysis
from torchlint.engine.core.callargs import get_arg
from torchlint.engine.core.walk import block_statements, iter_nodes
from torchlint.engine.flow.blocks import Place, statements
from torchlint.engine.flow.loop_events import Event, EventKind
from torchlint.engine.rule import SAFE, Invalid, NodeFix, Replace, Rule, fix
from torchlint.engine.semantic.kinds import Kind
from torchlint.engine.semantic.names import dotted
from torchlint.findings import Severity

from ..numerics._helpers import line_of

_SNAPSHOTTED = Kind.MODEL | Kind.OPTIMIZER


class StateDictSnapshotAliased(Rule):
    code = "TL605"
    analyses = frozenset(
        {
            Analysis.CALL_SITES,
            Analysis.KINDS,
            Analysis.LOCAL_FUNCTIONS,
            Analysis.LOOP_ANALYSIS,
            Analysis.OWN_SUMMARY,
            Analysis.SCOPES,
        }
    )
    requires = ("state_dict",)
    name = "state-dict-snapshot-aliased"
    message = (
        "`{name} = {owner}.state_dict()` keeps references to the live tensors, not a copy: the optimizer step on "
        "line {step} keeps changing them, so {use} on line {line} sees the latest weights, not this snapshot; "
        "take a copy (`copy.deepcopy({owner}.state_dict())`)"
    )
    severity = Severity.ERROR
    category = "correctness"
    summary = "best = model.state_dict() kept as a snapshot while training goes on: it restores nothing"
    what = (
        "Flags `name = model.state_dict()` (or `optimizer.state_dict()`, the receiver proven a module or "
        "optimizer) kept as a snapshot — the usual early-stopping `best_state` or an initial state — when an "
        "optimizer step runs after it (the training loop the assignment is in, or one that follows it, "
        "including the steps of this file's functions it calls) and `load_state_dict(name)` or "
        "`torch.save(name, ...)` reads it after that loop. A copy (`copy.deepcopy`, "
        "`{k: v.clone() ...}`) and a snapshot saved before the next step are not flagged."
    )
    why = (
        "`state_dict()` returns a dict of the module's parameter and buffer tensors themselves (detached, "
        "sharing storage), and an optimizer's `state_dict()` its live state tensors; `optimizer.step()` updates "
        'them in place. The "best" dict therefore always holds the current weights (checked on torch 2.13), '
        "and `model.load_state_dict(best)` after training restores nothing: the run silently keeps the last "
        "epoch's model, and the checkpoint saved as best is the final one."
    )
    example = """\
import torch

model = torch.nn.Linear(16, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
best_acc, best_state = 0.0, None
for epoch in range(epochs):
    for x, y in loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
    acc = evaluate(model)
    if acc > best_acc:
        best_acc = acc
        best_state = model.state_dict()
model.load_state_dict(best_state)
"""
    fix_example = """\
import torch

model = torch.nn.Linear(16, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
best_acc, best_state = 0.0, None
for epoch in range(epochs):
    for x, y in loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
    acc = evaluate(model)
    if acc > best_acc:
        best_acc = acc
        best_state = {k: v.clone() for k, v in model.state_dict().items()}
model.load_state_dict(best_state)
"""
    fix_safety = (
        "Safe: the snapshot becomes a copy, which is what the code reads it as. `copy.deepcopy(...)` when the "
        "file imports `copy` (or `deepcopy`), else, for a module, `{k: v.clone() for k, v in "
        "model.state_dict().items()}`; an optimizer's nested state is copied only with `deepcopy`. The copy "
        "uses memory on the tensors' device for as long as it is kept."
    )
    VALID = [
        """\
import copy
import torch
model = torch.nn.Linear(2, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(3):
    optimizer.step()
    best = copy.deepcopy(model.state_dict())
model.load_state_dict(best)
""",
        # saved immediately, before the next step
        """\
import torch
model = torch.nn.Linear(2, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(3):
    optimizer.step()
    state = model.state_dict()
    torch.save(state, "best.pt")
""",
        """\
import torch
model = torch.nn.Linear(2, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(3):
    optimizer.step()
    best = {k: v.clone() for k, v in model.state_dict().items()}
model.load_state_dict(best)
""",
        # no optimizer step proven (an opaque trainer): unknown
        """\
import torch
model = torch.nn.Linear(2, 2)
init = model.state_dict()
trainer.fit(model)
model.load_state_dict(init)
""",
    ]
    INVALID = [
        Invalid(
            """\
import copy
import torch
model = torch.nn.Linear(2, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
init = model.state_dict()
for step in range(100):
    optimizer.step()
model.load_state_dict(init)
""",
            line=5,
            fixed="""\
import copy
import torch
model = torch.nn.Linear(2, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
init = copy.deepcopy(model.state_dict())
for step in range(100):
    optimizer.step()
model.load_state_dict(init)
""",
        ),
        Invalid(
            """\
import torch
model = torch.nn.Linear(2, 2)
optimizer = torch.optim.Adam(model.parameters())
def train_epoch():
    optimizer.zero_grad()
    model(x).sum().backward()
    optimizer.step()
for epoch in range(10):
    train_epoch()
    if better():
        best_opt = optimizer.state_dict()
torch.save({"optimizer": best_opt}, "best.pt")
""",
            line=11,
        ),
    ]

    def visit_Assign(self, node: cst.Assign) -> None:
        value = node.value
        if len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Name):
            return
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and not value.args):
            return
        receiver = value.func.value
        if value.func.attr.value != "state_dict" or not self.ctx.kind(receiver) & _SNAPSHOTTED:
            return
        stmt = self.ctx.statement
        if stmt is None:
            return
        name = node.targets[0].target.value
        found = self._stepped_then_read(stmt, name)
        if found is None:
            return
        step, use, what = found
        message = self.message.format(
            name=name,
            owner=self.ctx.module.code_for_node(receiver),
            step=line_of(self.ctx.module, step),
            use=what,
            line=line_of(self.ctx.module, use),
        )
        self.report(node, message, fix=self._fix(value, bool(self.ctx.kind(receiver) & Kind.MODEL)))

    def _stepped_then_read(
        self, stmt: cst.SimpleStatementLine, name: str
    ) -> tuple[cst.CSTNode, cst.CSTNode, str] | None:
        """(an optimizer step after the snapshot, the read of `name` after that step's loop, how it is read)."""
        scope = self.ctx.scope_node  # the function (or module) whose body is being traversed
        if isinstance(scope, cst.FunctionDef):
            body = block_statements(scope.body)
        elif isinstance(scope, cst.Module):
            body = list(scope.body)
        else:
            return None  # a class body: it runs no training loop
        ordered = list(statements(body))
        at = next((i for i, (s, _) in enumerate(ordered) if s is stmt), None)
        if at is None:
            return None
        place = ordered[at][1]
        analysis = self.ctx.loop_analysis
        # the training loops the snapshot is in (outermost first), else the first one after it
        loops = [loop for loop in place.loops if _step(analysis.events(loop))]
        if not loops:
            later = (s for s, p in ordered[at + 1 :] if isinstance(s, (cst.For, cst.While)) and _outside(p, place))
            loops = [loop for loop in later if _step(analysis.events(loop))][:1]
            if loops and any(
                loop in p.loops and _binds(s, name)
                for loop in loops
                for s, p in ordered
                if isinstance(s, cst.SimpleStatementLine)
            ):
                return None  # the loop takes its own snapshots: the one read after it is reported there
        if not loops:
            return None
        loop = loops[0]
        step = _step(analysis.events(loop))
        if step is None:
            return None
        end = max(i for i, (s, p) in enumerate(ordered) if s is loop or loop in p.loops)
        for s, p in ordered[max(end, at) + 1 :]:
            if loop in p.loops or not isinstance(s, cst.SimpleStatementLine):
                continue
            if _binds(s, name):
                return None
            read = _read(self.ctx, s, name)
            if read is not None:
                return step, read[0], read[1]
        return None

    def _fix(self, call: cst.Call, module: bool) -> NodeFix | None:
        imports = self.ctx.imports
        code = self.ctx.module.code_for_node(call)
        copy, deepcopy = imports.local_name("copy"), imports.local_name("copy.deepcopy")
        if copy is not None or deepcopy is not None:
            new = f"{copy}.deepcopy({code})" if copy is not None else f"{deepcopy}({code})"
        elif module:
            new = f"{{k: v.clone() for k, v in {code}.items()}}"
        else:
            return None
        return fix("Snapshot a copy", Replace(call, new), applicability=SAFE)


def _step(events: Iterable[Event]) -> cst.CSTNode | None:
    return next((e.node for e in events if e.kind is EventKind.STEP), None)


def _outside(place: Place, snapshot: Place) -> bool:
    """A loop at `place` runs after the snapshot on every path (not in a branch the snapshot is not in)."""
    return place.path[: len(snapshot.path)] == snapshot.path


def _binds(stmt: cst.SimpleStatementLine, name: str) -> bool:
    """`stmt` assigns `name` (a new value: the old snapshot is no longer what is read)."""
    for n in iter_nodes(stmt):
        if isinstance(n, cst.Assign):
            targets = [t.target for t in n.targets]
        elif isinstance(n, (cst.AugAssign, cst.AnnAssign)):
            targets = [n.target]
        else:
            continue
        if any(_is(m, name) for t in targets for m in (t, *iter_nodes(t))):
            return True
    return False


def _read(ctx: FileContext, stmt: cst.SimpleStatementLine, name: str) -> tuple[cst.CSTNode, str] | None:
    """`x.load_state_dict(name)` or `torch.save(name | {...: name}, ...)` in `stmt`."""
    for n in iter_nodes(stmt):
        if not isinstance(n, cst.Call):
            continue
        if isinstance(n.func, cst.Attribute) and n.func.attr.value == "load_state_dict":
            arg = get_arg(n, "state_dict", 0)
            if arg is not None and _is(arg.value, name):
                return n, f"`{dotted(n.func) or 'load_state_dict'}({name})`"
        if ctx.qualname(n.func) == "torch.save":
            obj = get_arg(n, "obj", 0)
            saved = obj.value if obj is not None else None
            values = (
                [e.value for e in saved.elements if isinstance(e, cst.DictElement)]
                if isinstance(saved, cst.Dict)
                else [saved]
            )
            if any(v is not None and _is(v, name) for v in values):
                return n, "`torch.save`"
    return None


def _is(expr: cst.CSTNode, name: str) -> bool:
    return isinstance(expr, cst.Name) and expr.value == name
