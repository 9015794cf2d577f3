"""TL110 inference-without-no-grad: Evaluation / inference loop outside torch.no_grad()"""

from __future__ import annotations

from functools import cached_property

import libcst as cst

from torchlint.engine.context import FileContext
from torchlint.engine.core.analyses import Analysis
from torchlint.engine.core.callargs import is_name
from torchlint.engine.core.walk import block_statements, iter_nodes, iter_statements, small_statements
from torchlint.engine.flow.blocks import Loop
from torchlint.engine.flow.graph_flow import Body, body_for, body_of, graph_nodes, names_read
from torchlint.engine.flow.loop_events import EventKind
from torchlint.engine.flow.no_grad_callers import runs_without_grad
from torchlint.engine.rule import SAFE, Invalid, NodeFix, Replace, Rule, fix
from torchlint.engine.semantic.kinds import GRAD_MODE
from torchlint.engine.semantic.names import dotted
from torchlint.findings import Severity

from ._helpers import is_test_file, wrapped_in_no_grad

_HELPER_MESSAGE = (
    "`{fn}()` runs the model with autograd on, is called again and again, and its output never reaches "
    "`backward()`: every call records a graph it never uses — decorate it with `@torch.no_grad()`"
)


class InferenceWithoutNoGrad(Rule):
    code = "TL110"
    analyses = frozenset(
        {
            Analysis.CALLING_CONTEXTS,
            Analysis.CALL_SITES,
            Analysis.GRAPH_BODIES,
            Analysis.LAYOUT,
            Analysis.LOCAL_FUNCTIONS,
            Analysis.LOOP_ANALYSIS,
            Analysis.OWN_SUMMARY,
            Analysis.SCOPES,
            Analysis.VALUES,
        }
    )
    # what the two checks look for: an eval-mode switch before a loop, a backward() the helpers' callers run
    requires = (".eval(", "train(False)", "backward")
    name = "inference-without-no-grad"
    message = "this evaluation loop runs the model with autograd on: wrap it in `with torch.no_grad():` (or `torch.inference_mode()`)"
    severity = Severity.WARNING
    category = "resource"
    opt_in = (
        "Measured on 25 public repositories it was not tuned on (bench/realworld, unseen at 2026-12-03 and "
        "2026-12-04), 0 of its 17 findings were right (17 debatable): evaluation loops of teaching notebooks "
        "and small models that take `.item()` of each loss at once, so the graph is freed every batch and the "
        "extra memory is one forward's activations. Select it for large models, where those activations "
        "decide whether evaluation fits."
    )
    summary = "Evaluation / inference loop outside torch.no_grad()"
    what = (
        "Flags an evaluation or inference loop — one that runs after `model.eval()` (or `train(False)`) in "
        "the same body, or switches the model to eval mode itself, and calls no `backward()` — that "
        "calls the model outside "
        "`torch.no_grad()`, `torch.inference_mode()` or a function decorated with either. Also flags "
        "a model call in a function called inside a loop (sampling, logging, saving images from the "
        "training loop) whose output never reaches `backward()` there and is not returned or stored, when some "
        "call site of that function runs with autograd on. What a function is called decides nothing: the "
        "model's mode, the backward calls and the grad mode at every call site (calling contexts) do. Test "
        "files (`test_*.py`, `tests/`) are not checked."
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
        # every caller runs the helper with autograd off
        """\
import torch
def accuracy(net, loader):
    net.eval()
    return sum((net(x).argmax(1) == y).sum().item() for x, y in loader)
def evaluate(net, loader):
    net.eval()
    correct = 0
    for x, y in loader:
        correct += (net(x).argmax(1) == y).sum().item()
    return correct
for x, y in train_loader:
    opt.zero_grad()
    loss_fn(model(x), y).backward()
    opt.step()
with torch.set_grad_enabled(False):
    print(evaluate(model, val_loader))
""",
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
        # helpers called from the training loop: autograd off, or their output may be back-propagated
        """\
import torch
model = torch.nn.Linear(4, 1)

@torch.no_grad()
def sample(z):
    print(model(z).mean().item())

def log_sample(z):
    with torch.no_grad():
        print(model(z).mean().item())

def show(z):
    print(model(z).mean().item())

def predict(z):
    return model(z)

for epoch in range(10):
    for x, y in loader:
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
    sample(torch.randn(2, 4))
    log_sample(torch.randn(2, 4))
    with torch.no_grad():
        show(torch.randn(2, 4))
    extra = predict(torch.randn(2, 4)).sum()
""",
        """\
import torch
import lightning as L

class Regressor(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(4, 1)
    def show_sample(self):
        print(self.net(torch.randn(2, 4)).mean().item())
    def training_step(self, batch, i):
        for x in batch:
            self.show_sample()
            self.manual_backward(self.net(x).sum())
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
        Invalid(
            """\
import torch
model = torch.nn.Linear(4, 1)

def sample(z):
    out = model(z)
    print(out.mean().item())

for epoch in range(10):
    for x, y in loader:
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
    sample(torch.randn(2, 4))
""",
            line=5,
        ),
    ]

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        """A helper the training loop calls (sampling, logging): its forward passes outside loops, when
        none of their outputs can reach a backward — not there, not through what it hands back."""
        ctx = self.ctx
        if not ctx.file_calls("backward") or ctx.under_call(*GRAD_MODE) or is_test_file(ctx.path):
            return
        cls = ctx.current_class
        method = cls is not None and any(s is node for s in block_statements(cls.body))
        if not any(
            site.in_loop for site in ctx.call_sites.by_key.get(("self" if method else "name", node.name.value), ())
        ):
            return
        code = ctx.module.code_for_node(node)
        if "backward" in code or "autograd" in code or _lightning_hook(ctx):
            return  # gradients wanted here, or the trainer decides when autograd is on
        body = body_for(ctx, node)
        if body is None:
            return
        calls = [call for call, _, loops, off in body.forwards if not loops and not off]
        if calls and not runs_without_grad(ctx, node) and not _output_escapes(body, node):  # its callers: last
            self.report(calls[0], _HELPER_MESSAGE.format(fn=node.name.value))

    def visit_For(self, node: cst.For) -> None:
        self._check(node)

    def visit_While(self, node: cst.While) -> None:
        self._check(node)

    def _check(self, loop: Loop) -> None:
        ctx = self.ctx
        if ctx.under_call(*GRAD_MODE) or is_test_file(ctx.path):  # tests: memory is not the point
            return
        if not self._switches_to_eval:
            return  # cheap exit: no evaluation context anywhere in the file
        if any(runs_without_grad(ctx, fn) for fn in ctx.functions):
            return  # a helper every caller runs with autograd off
        body = body_of(ctx)
        if body.index(loop) is None or not self._evaluates(loop, body):
            return
        for outer in ctx.loops[:-1]:  # report the outermost such loop only
            if body.index(outer) is not None and self._evaluates(outer, body):
                return
        fix_ = self._wrap(loop)
        self.report(loop, fix=fix_)

    @cached_property
    def _switches_to_eval(self) -> bool:
        """The file calls `x.eval()` or `train(False)` somewhere (asked once per file, of its call index)."""
        if not self.ctx.file_calls("eval", "train"):
            return False  # no call of either name: the call index is not needed
        for site in self.ctx.call_sites.calls:
            func, args = site.call.func, site.call.args
            if isinstance(func, cst.Attribute) and func.attr.value == "eval":
                return True
            name = (
                func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
            )
            if name == "train" and len(args) == 1 and args[0].keyword is None and is_name(args[0].value, "False"):
                return True
        return False

    def _evaluates(self, loop: Loop, body: Body) -> bool:
        """An inference loop: model calls outside no_grad, no backward, in an evaluation context."""
        if not any(loop in loops and not off for _, _, loops, off in body.forwards):
            return False
        events = self.ctx.loop_analysis.events(loop)
        if any(e.kind is EventKind.BACKWARD for e in events) or any(loop in b.loops for b in body.backwards):
            return False
        start = body.index(loop)
        assert start is not None, "asked of a loop of the body only"
        modes = [m for m in body.modes if m[0] < start]
        if modes and modes[-1][1]:
            return True
        return any(e.kind is EventKind.EVAL and e.depth == 0 for e in events) and not any(
            e.kind is EventKind.TRAIN for e in events
        )

    def _wrap(self, loop: Loop) -> NodeFix | None:
        new = wrapped_in_no_grad(self.ctx, loop)
        return fix("Wrap the loop in `with torch.no_grad():`", Replace(loop, new), applicability=SAFE) if new else None


def _lightning_hook(ctx: FileContext) -> bool:
    """A method of a Lightning module: the trainer decides when autograd is on."""
    cls = ctx.current_class
    return cls is not None and any(
        (ctx.qualname(b.value) or "").startswith(("lightning", "pytorch_lightning")) for b in cls.bases
    )


# container methods that keep their argument: `buffer.append(log_prob)` may be back-propagated later
_STORES = frozenset({"append", "extend", "insert", "add", "update", "put", "put_nowait", "setdefault"})


def _output_escapes(body: Body, fn: cst.FunctionDef) -> bool:
    """Some model output leaves `fn` — returned, yielded, stored on an object or in a container, or the
    function declares globals — where a caller may back-propagate it: unknown, so not flagged."""
    statements = [s for s in iter_statements(block_statements(fn.body)) if isinstance(s, cst.SimpleStatementLine)]
    carriers: set[str] = set()

    def carries(expr: cst.CSTNode) -> bool:
        nodes = list(graph_nodes(expr))
        return any(isinstance(n, cst.Call) and body.is_forward(n) for n in nodes) or any(
            dotted(n) in carriers for n in nodes if isinstance(n, (cst.Name, cst.Attribute))
        )

    for _ in range(2):  # twice: a loop may carry a value back to an earlier statement
        for stmt in statements:
            for small in small_statements(stmt):
                if isinstance(small, (cst.Assign, cst.AnnAssign, cst.AugAssign)) and small.value is not None:
                    if carries(small.value):
                        targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
                        carriers.update(names_read(cst.Tuple([cst.Element(t) for t in targets])))
    for stmt in statements:
        for small in small_statements(stmt):
            if isinstance(small, (cst.Global, cst.Nonlocal)):
                return True
            if isinstance(small, (cst.Return, cst.Expr)) and small.value is not None:
                value = small.value.value if isinstance(small.value, cst.Yield) else small.value
                if isinstance(small, cst.Return) or isinstance(small.value, cst.Yield):
                    if value is not None and carries(value):
                        return True
            if isinstance(small, (cst.Assign, cst.AnnAssign, cst.AugAssign)) and small.value is not None:
                targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
                stored = any(
                    isinstance(n, (cst.Attribute, cst.Subscript)) for t in targets for n in (t, *iter_nodes(t))
                )
                if stored and carries(small.value):  # `self.last = out`, `cache[k] = out`
                    return True
            for call in iter_nodes(small, into_functions=False):
                if (
                    isinstance(call, cst.Call)
                    and isinstance(call.func, cst.Attribute)
                    and call.func.attr.value in _STORES
                    and any(carries(a.value) for a in call.args)
                ):
                    return True
    return False
