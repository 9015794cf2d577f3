"""TL703 tensor-data-attribute: `.data` where autograd's bookkeeping matters"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TypeGuard

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.core.walk import block_statements
from torchlint.engine.flow.blocks import Loop
from torchlint.engine.flow.loop_events import EventKind
from torchlint.engine.rule import SAFE, Invalid, Replace, Rule, fix
from torchlint.engine.semantic.kinds import Kind
from torchlint.engine.semantic.names import dotted
from torchlint.findings import Severity

from ._helpers import zero_dim_index

# Where a value read through `.data` only leaves autograd's world: it becomes a number, an array, text or a
# file, so the missing version tracking can never matter.
_SINK_METHODS = frozenset({"numpy", "item", "tolist"})
_SINK_BUILTINS = frozenset({"print", "str", "repr", "format", "float", "int", "bool", "len"})
_SINK_QUALNAMES = ("numpy.", "matplotlib.", "torchvision.utils.", "torch.save", "torch.equal", "torch.allclose")


class TensorDataAttribute(Rule):
    code = "TL703"
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
    requires = ("data",)
    name = "tensor-data-attribute"
    message = "`{expr}.data` {how}: autograd's version tracking cannot see it{fix}"
    severity = Severity.WARNING
    category = "correctness"
    opt_in = (
        "Measured on 39 public repositories it was not tuned on (bench/realworld, four sets unseen at 2026-12-03 "
        "and 2026-12-04), 0 of its 5 findings were right (all debatable): each `.data` was a deliberate detach "
        "(a gradient penalty's fresh leaf, a recurrent state never changed in place, a masked convolution's "
        "constant mask reapplied before each use), where `.detach()` is only cleaner. Select it to keep "
        "`.detach()` and `torch.no_grad()` as the house style."
    )
    summary = "`.data` written while a graph may hold the tensor, or read back into autograd"
    what = (
        "Flags `.data` on tensors autograd tracks (parameters, `requires_grad` tensors, model outputs) in code "
        "that builds graphs — `forward`, `training_step`, and training loops (loops that call `backward`) — "
        "outside `torch.no_grad()`, in two shapes:\n\n"
        "- **writes** (`w.data = ...`, `w.data[i] = ...`, `w.data -= ...`, `w.data.clamp_(...)`) in `forward` "
        "or in a training loop before that iteration's `backward()` (after it, the graph is freed and the "
        "write is the classic manual update);\n"
        "- **reads whose value goes back into autograd**: `h = h.data` carrying a recurrent state across "
        "iterations, or a `.data` value mixed by arithmetic with other tensors (`feats + x.data`).\n\n"
        "Silent on initialisation (`__init__`, `reset_parameters`, functions applied with `Module.apply`, "
        "and any code outside `forward` and training loops), on `.grad.data`, and on reads that leave "
        "autograd: `.numpy()`, `.item()`, `.tolist()`, `print`/`str`/f-strings, comparisons, NumPy, "
        "matplotlib, `torchvision.utils` (saving images), `torch.save`."
    )
    why = (
        "`.data` returns a tensor that shares storage but is detached from autograd's version counter. "
        "Writing through it while a graph holds the tensor changes values autograd saved for backward "
        "without raising — the gradients are silently wrong. A value read through it and fed back into a "
        "graph is saved for backward untracked, so a later in-place change corrupts that graph silently; "
        "`.detach()` gives the same values and raises instead. Writes belong under `with torch.no_grad():`."
    )
    example = """\
from torch import nn

rnn = nn.GRU(8, 8)
for x, y in loader:
    out, hidden = rnn(x, hidden)
    hidden = hidden.data
    loss_fn(out, y).backward()
"""
    fix_example = """\
from torch import nn

rnn = nn.GRU(8, 8)
for x, y in loader:
    out, hidden = rnn(x, hidden)
    hidden = hidden.detach()
    loss_fn(out, y).backward()
"""
    fix_safety = (
        "Safe, for reads only: `x.data` becomes `x.detach()` (same values, no graph, version-tracked). Writes "
        "(`p.data = ...`, `p.data.mul_(...)`) are reported without a fix: move them under `torch.no_grad()`."
    )
    VALID = [
        # `stats` is nothing proven: a `.weight` attribute alone does not make a Parameter
        "def train(stats, loader):\n    for x, y in loader:\n        loss = loss_fn(model(x), y)\n"
        "        stats.weight.data.clamp_(-1, 1)\n        loss.backward()\n",
        """\
import torch
with torch.no_grad():
    for p in model.parameters():
        p.data.mul_(0.9)
""",
        # initialisation, wherever it is spelled
        """\
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.fc.weight.data.normal_(0, 0.02)
""",
        "import torch\nmodel = torch.nn.Linear(4, 2)\nmodel.weight.data.copy_(pretrained)\n",
        "dataset = load()\nxs = dataset.data\n",
        # manual SGD after backward: the graph is already freed
        """\
def train(model, loader):
    for x, y in loader:
        loss_fn(model(x), y).backward()
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-0.1)
            p.grad.data.zero_()
""",
        # reads that leave autograd
        """\
def train(model, loader, opt):
    for x, y in loader:
        out = model(x)
        loss = loss_fn(out, y)
        loss.backward()
        opt.step()
        print(out.data, f"{loss.data}")
        acc = (out.data.argmax(1) == y).float().mean()
        preds = out.data.cpu().numpy()
""",
    ]
    INVALID = [
        Invalid(
            """\
from torch import nn
rnn = nn.GRU(8, 8)
for x, y in loader:
    out, hidden = rnn(x, hidden)
    hidden = hidden.data
    loss_fn(out, y).backward()
""",
            line=5,
            fixed="""\
from torch import nn
rnn = nn.GRU(8, 8)
for x, y in loader:
    out, hidden = rnn(x, hidden)
    hidden = hidden.detach()
    loss_fn(out, y).backward()
""",
        ),
        Invalid(
            """\
from torch import nn
def train(model: nn.Module, loader):
    for x, y in loader:
        loss = loss_fn(model(x), y)
        model.fc.weight.data.clamp_(-1, 1)
        loss.backward()
""",
            line=5,
        ),
        Invalid(
            """\
from torch import nn
class Clipped(nn.Module):
    def forward(self, x):
        self.fc.weight.data = self.fc.weight.data.clamp(-1, 1)
        return self.fc(x)
""",
            line=4,
        ),
        Invalid(
            """\
from torch import nn
class Gate(nn.Module):
    def forward(self, x):
        return self.fc(x) * self.fc.weight.data.mean()
""",
            line=4,
            fixed="""\
from torch import nn
class Gate(nn.Module):
    def forward(self, x):
        return self.fc(x) * self.fc.weight.detach().mean()
""",
        ),
    ]

    def visit_Module(self, node: cst.Module) -> None:
        self.writes: set[int] = set()
        self.params: set[str] = set()
        self.outputs: set[str] = set()  # names unpacked from a model call (`out, hidden = rnn(x, hidden)`)
        self.assigned: list[cst.BaseExpression] = []
        self.mixed: set[int] = set()  # `.data` reads that are an operand of arithmetic with another tensor
        self.carried: set[int] = set()  # `.data` reads assigned back to a name they read (`h = h.data`)
        self.sinks: list[cst.CSTNode] = []  # enclosing nodes whose result leaves autograd
        self.body_index: dict[Loop, dict[cst.CSTNode, int]] = {}  # loop -> its body statements
        self.position: dict[Loop, int] = {}  # loop -> index of the body statement being visited
        self.zero_dim_reads: set[int] = set()  # `x.data` of `x.data[0]` on a 0-dim `x`: TL708's finding

    # -- where the traversal is ---------------------------------------------
    def visit_For(self, node: cst.For) -> None:
        self._enter_statement(node)
        self._enter_loop(node)
        it = node.iter
        while isinstance(it, cst.Call) and dotted(it.func) in ("enumerate", "zip", "list") and it.args:
            it = it.args[0].value
        if (
            isinstance(it, cst.Call)
            and isinstance(it.func, cst.Attribute)
            and it.func.attr.value in ("parameters", "named_parameters", "buffers", "named_buffers")
        ):
            for n in (node.target, *_names_in(node.target)):
                if isinstance(n, cst.Name):
                    self.params.add(n.value)

    def visit_While(self, node: cst.While) -> None:
        self._enter_statement(node)
        self._enter_loop(node)

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._enter_statement(node)

    def visit_If(self, node: cst.If) -> None:
        self._enter_statement(node)

    def visit_With(self, node: cst.With) -> None:
        self._enter_statement(node)

    def visit_Try(self, node: cst.Try) -> None:
        self._enter_statement(node)

    def _enter_loop(self, loop: Loop) -> None:
        self.body_index[loop] = {s: i for i, s in enumerate(block_statements(loop.body))}

    def _enter_statement(self, stmt: cst.CSTNode) -> None:
        for loop in self.ctx.loops:
            index = self.body_index.get(loop, {}).get(stmt)
            if index is not None:
                self.position[loop] = index

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value.endswith("_") and not func.attr.value.startswith("_"):
            self.writes.add(id(func.value))
        if self._is_sink(func):
            self.sinks.append(node)

    def leave_Call(self, node: cst.Call) -> None:
        if self.sinks and self.sinks[-1] is node:
            self.sinks.pop()

    def visit_Comparison(self, node: cst.Comparison) -> None:
        self.sinks.append(node)

    def leave_Comparison(self, node: cst.Comparison) -> None:
        self.sinks.pop()

    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        self.sinks.append(node)

    def leave_FormattedString(self, node: cst.FormattedString) -> None:
        self.sinks.pop()

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        for mine, other in ((node.left, node.right), (node.right, node.left)):
            if _is_data(_chain_base(mine)) and not _is_data(_chain_base(other)) and not _is_number(other):
                self.mixed.add(id(_chain_base(mine)))

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self.writes.add(id(t.target))
        # `w.data = w.data.clamp(...)`: one finding (the write), not a second for the read
        self.assigned = [t.target for t in node.targets]
        if isinstance(node.value, cst.Call):
            # names unpacked from the call: the cheap test before asking what the call returns
            unpacked = [n.value for t in node.targets for n in _names_in(t.target) if isinstance(n, cst.Name)]
            if unpacked and self.ctx.kind(node.value) & Kind.TENSOR:
                self.outputs.update(unpacked)
        if self.ctx.loops:
            targets = {
                n.value for t in node.targets for n in (t.target, *_names_in(t.target)) if isinstance(n, cst.Name)
            }
            for value in (node.value, *_names_in(node.value)):
                if _is_data(value) and targets & _names_read(value.value):
                    self.carried.add(id(value))

    def leave_Assign(self, node: cst.Assign) -> None:
        self.assigned = []

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.writes.add(id(node.target))

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if _is_data(node.value) and zero_dim_index(self.ctx, node) is not None:
            self.zero_dim_reads.add(id(node.value))

    # -- the check ----------------------------------------------------------
    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value != "data":
            return
        recv = node.value
        if (
            id(node) in self.zero_dim_reads
            or not self._is_tensor(recv)
            or not self._builds_graphs()
            or self._under_no_grad()
        ):
            return
        expr = self.ctx.module.code_for_node(recv)
        if id(node) in self.writes:
            if not self._after_backward():
                self.report(
                    node,
                    self.message.format(
                        expr=expr, how="is written outside `torch.no_grad()` while a graph may hold the tensor", fix=""
                    ),
                )
            return
        if any(self.ctx.module.code_for_node(t) == f"{expr}.data" for t in self.assigned):
            return  # the read half of a reported write
        if self.sinks or (id(node) not in self.carried and id(node) not in self.mixed):
            return
        how = "carries the state into the next iteration" if id(node) in self.carried else "goes back into the graph"
        self.report(
            node,
            self.message.format(expr=expr, how=how, fix=f"; use `{expr}.detach()`"),
            fix=fix("Use `.detach()`", Replace(node, f"{expr}.detach()"), applicability=SAFE),
        )

    def _is_sink(self, func: cst.BaseExpression) -> bool:
        if type(func) is cst.Attribute and func.attr.value in _SINK_METHODS:
            return True
        q = self.ctx.qualname(func)
        if q is None:
            return type(func) is cst.Name and func.value in _SINK_BUILTINS
        return q.startswith(_SINK_QUALNAMES)

    def _is_tensor(self, recv: cst.BaseExpression) -> bool:
        if isinstance(recv, cst.Attribute) and recv.attr.value == "grad":
            return False  # gradients are not tracked by autograd
        if isinstance(recv, cst.Attribute) and recv.attr.value in ("weight", "bias") and self._in_module(recv.value):
            return True  # a layer's parameter: `self.fc.weight`, `model.conv1.bias`
        if isinstance(recv, cst.Name) and recv.value in self.params | self.outputs:
            return True
        fn = self.ctx.current_function
        if isinstance(recv, cst.Name) and fn is not None and fn.name.value == "forward" and self.ctx.in_module_class:
            if recv.value in {p.name.value for p in fn.params.params[1:]}:
                return True  # forward's inputs are tensors
        return bool(self.ctx.kind(recv) & (Kind.TENSOR | Kind.LOSS)) and not self.ctx.kind(recv) & Kind.BATCH

    def _in_module(self, owner: cst.BaseExpression) -> bool:
        """`owner` is a module or a part of one: its chain starts at a proven module (or `self` in a
        module class). The name `weight` alone proves nothing: any object may have one."""
        while isinstance(owner, cst.Attribute):
            if self.ctx.kind(owner) & Kind.MODEL:
                return True
            owner = owner.value
        if isinstance(owner, cst.Name) and owner.value == "self":
            return self.ctx.in_module_class
        return bool(self.ctx.kind(owner) & Kind.MODEL)

    def _under_no_grad(self) -> bool:
        return self.ctx.under_call("torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad")

    def _builds_graphs(self) -> bool:
        """`forward`/`training_step` of a module, or a training loop; everything else is set-up or teardown."""
        fn = self.ctx.current_function
        if fn is not None and fn.name.value in ("forward", "training_step") and self.ctx.in_module_class:
            return True
        return self._training_loop() is not None

    def _training_loop(self) -> Loop | None:
        loops = self.ctx.loop_analysis
        return next((loop for loop in reversed(self.ctx.loops) if loops.is_training_loop(loop)), None)

    def _after_backward(self) -> bool:
        """In the innermost training loop, an unconditional `backward()` earlier in the body runs first."""
        loop = self._training_loop()
        here = self.position.get(loop) if loop is not None else None
        if loop is None or here is None:
            return False
        index = self.body_index[loop]
        return any(
            e.kind is EventKind.BACKWARD
            and e.depth == 0
            and not e.path
            and e.via is None
            and index.get(e.top, here) < here
            for e in self.ctx.loop_analysis.events(loop)
        )


def _is_data(node: cst.CSTNode) -> TypeGuard[cst.Attribute]:
    return isinstance(node, cst.Attribute) and node.attr.value == "data"


def _chain_base(expr: cst.BaseExpression) -> cst.BaseExpression:
    """`x.data` in `x.data`, `x.data[i]`, `x.data.view(...)`: the value the expression starts from."""
    while True:
        if isinstance(expr, cst.Subscript):
            expr = expr.value
        elif isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
            expr = expr.func.value
        else:
            return expr


def _is_number(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.UnaryOperation):
        expr = expr.expression
    return isinstance(expr, (cst.Integer, cst.Float))


def _names_read(expr: cst.BaseExpression) -> set[str]:
    """The bare names an expression chain starts from (`h` in `h`, `h[0]`, `h.x`)."""
    while isinstance(expr, (cst.Subscript, cst.Attribute)):
        expr = expr.value
    return {expr.value} if isinstance(expr, cst.Name) else set()


def _names_in(target: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    if isinstance(target, (cst.Tuple, cst.List)):
        for el in target.elements:
            yield el.value
            yield from _names_in(el.value)
