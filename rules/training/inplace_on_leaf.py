"""TL120 inplace-on-leaf: an in-place op on a leaf tensor that requires grad, outside `torch.no_grad()`"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.core.callargs import get_arg, is_name
from torchlint.engine.flow.graph_flow import Body, Grad, assignments, body_of
from torchlint.engine.rule import DISPLAY, SAFE, Invalid, NodeFix, Replace, Rule, fix
from torchlint.engine.semantic.kinds import GRAD_MODE
from torchlint.engine.semantic.names import dotted
from torchlint.findings import Severity

from ._helpers import wrapped_in_no_grad

# In-place methods that change autograd metadata or storage placement, not values: allowed on leaves.
_NOT_VALUE_WRITES = frozenset({"requires_grad_", "share_memory_", "detach_", "retain_grad"})
# torch.nn layers whose `.weight` / `.bias` are Parameters unless a constructor argument turns them off.
_LAYERS = frozenset(
    "Linear Bilinear Conv1d Conv2d Conv3d ConvTranspose1d ConvTranspose2d ConvTranspose3d Embedding "
    "EmbeddingBag LayerNorm GroupNorm BatchNorm1d BatchNorm2d BatchNorm3d".split()
)
_SWITCHES = {"weight": ("affine", "elementwise_affine"), "bias": ("bias", "affine", "elementwise_affine")}


class InplaceOnLeaf(Rule):
    code = "TL120"
    analyses = frozenset(
        {
            Analysis.CALLING_CONTEXTS,
            Analysis.CALL_SITES,
            Analysis.GRAD_SWITCHES,
            Analysis.GRAPH_BODIES,
            Analysis.LAYOUT,
            Analysis.OWN_SUMMARY,
            Analysis.SCOPES,
            Analysis.VALUES,
        }
    )
    requires = ("Parameter", "requires_grad", "torch.nn", "nn.")
    name = "inplace-on-leaf"
    message = (
        'in-place {op} on `{expr}`, {what}, with autograd on: RuntimeError "a leaf Variable that requires '
        'grad is being used in an in-place operation"; wrap it in `with torch.no_grad():`'
    )
    severity = Severity.ERROR
    category = "correctness"
    opt_in = (
        "Measured on 123 public repositories it was not tuned on (bench/realworld, seven sets unseen at "
        "2026-12-03 and 2026-12-04), none of its 8 findings was right (all in one repository: weight "
        "copies in a `load_from` method whose only caller runs it under `torch.no_grad()`; calling "
        "contexts follow such callers now). Select it to catch the error before a run reaches the line."
    )
    summary = "in-place op on a leaf tensor that requires grad, outside `torch.no_grad()`"
    what = (
        "Flags an in-place operation — `w += ...`, `w.add_(...)`, `w.fill_(...)`, `w[i] = ...` — on a tensor "
        "proven a leaf that requires grad: an `nn.Parameter(...)`, a tensor created with `requires_grad=True` "
        "or marked with `requires_grad_()`, a `self.` attribute every method sets to one, or the `.weight` / "
        "`.bias` of a torch.nn layer built in sight (`nn.Linear`, convolutions, norms, `nn.Embedding`). "
        "Silent under `torch.no_grad()` / `torch.inference_mode()` (a `with` block or a decorator), and in a "
        "function every possible caller of which in the project runs it so (for a method: every `x.m(...)` "
        "in any file whose receiver is not proven another class with its own `m`). A function nothing in "
        "the project calls is an entry point: it runs in PyTorch's default mode, autograd on. Silent on "
        "`.data`, on non-leaf tensors (`w * 2`), on `torch.nn.init.*` calls, and on tensors whose "
        "`requires_grad` is turned off in the file."
    )
    why = (
        "Autograd needs a leaf's original value to compute its gradient, so writing into it while gradients "
        "are recorded raises `RuntimeError: a leaf Variable that requires grad is being used in an in-place "
        "operation`. Updates and initialisations of parameters belong under `torch.no_grad()` (what "
        "optimizers and `torch.nn.init` do internally)."
    )
    example = """\
import torch

w = torch.randn(10, 1, requires_grad=True)
for x, y in batches:
    loss = ((x @ w - y) ** 2).mean()
    loss.backward()
    w -= 0.1 * w.grad
    w.grad.zero_()
"""
    fix_example = """\
import torch

w = torch.randn(10, 1, requires_grad=True)
for x, y in batches:
    loss = ((x @ w - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
    w.grad.zero_()
"""
    fix_safety = (
        "Safe when the statement is the in-place operation alone (`w -= ...`, `w.fill_(...)`, `w[i] = ...`): "
        "under `no_grad` it runs exactly as intended. Display only when the statement does more (`y = f(w.add_(1))`), "
        "since its other computations would stop being recorded too."
    )
    VALID = [
        # under no_grad, as a block or as a decorator
        """\
import torch
w = torch.randn(3, requires_grad=True)
with torch.no_grad():
    w -= 0.1 * w.grad
""",
        """\
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(1))
    @torch.no_grad()
    def reset(self):
        self.scale.fill_(1.0)
""",
        # `.data`, `torch.nn.init`, a non-leaf, a frozen parameter
        "import torch\nw = torch.randn(3, requires_grad=True)\nw.data.mul_(0.5)\n",
        "import torch\nfrom torch import nn\nfc = nn.Linear(4, 2)\nnn.init.zeros_(fc.bias)\n",
        "import torch\nw = torch.randn(3, requires_grad=True)\nv = w * 2\nv.add_(1)\n",
        "import torch\nw = torch.nn.Parameter(torch.ones(3), requires_grad=False)\nw.fill_(0)\n",
        "import torch\nfrom torch import nn\nfc = nn.Linear(4, 2, bias=False)\nfc.weight.requires_grad_(False)\nfc.weight.fill_(0)\n",
        # nothing proves a leaf
        "def step(params, lr):\n    for p in params:\n        p -= lr * p.grad\n",
    ]
    INVALID = [
        Invalid(
            """\
import torch
w = torch.randn(3, requires_grad=True)
w -= 0.1 * w.grad
""",
            line=3,
            fixed="""\
import torch
w = torch.randn(3, requires_grad=True)
with torch.no_grad():
    w -= 0.1 * w.grad
""",
        ),
        Invalid(
            """\
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.fc.bias.zero_()
""",
            line=7,
            fixed="""\
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        with torch.no_grad():
            self.fc.bias.zero_()
""",
        ),
        Invalid(
            """\
import torch
from torch import nn
class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.alpha = nn.Parameter(torch.zeros(4))
    def forward(self, x):
        self.alpha[0] = 1.0
        return x * self.alpha
""",
            line=8,
            fixed="""\
import torch
from torch import nn
class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.alpha = nn.Parameter(torch.zeros(4))
    def forward(self, x):
        with torch.no_grad():
            self.alpha[0] = 1.0
        return x * self.alpha
""",
        ),
        Invalid(
            """\
import torch
w = torch.zeros(3, requires_grad=True)
print(w.add_(1))
""",
            line=3,
            fixed="""\
import torch
w = torch.zeros(3, requires_grad=True)
with torch.no_grad():
    print(w.add_(1))
""",
        ),
    ]

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        op = self.ctx.module.code_for_node(node.operator).strip()
        self._check(node, node.target, f"`{op}`")

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            if isinstance(t.target, cst.Subscript):
                self._check(node, t.target.value, "item assignment")

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute):
            return
        method = func.attr.value
        if method.endswith("_") and not method.startswith("_") and method not in _NOT_VALUE_WRITES:
            self._check(node, func.value, f"`.{method}()`")

    def _check(self, node: cst.CSTNode, target: cst.BaseExpression, op: str) -> None:
        if self.ctx.under_call(*GRAD_MODE):
            return
        body = body_of(self.ctx)
        at = body.index(node)
        what = self._leaf(target, at) if at is not None else None
        if what is None:
            return
        if self.ctx.context_at(node).no_grad:
            return  # every possible caller (cross-file) runs it with autograd off: asked last, it reads them
        expr = self.ctx.module.code_for_node(target)
        self.report(node, self.message.format(op=op, expr=expr, what=what), fix=self._wrap(node))

    def _leaf(self, target: cst.BaseExpression, at: int) -> str | None:
        """Why `target` is a leaf that requires grad (None: not proven)."""
        name = dotted(target)
        if name is None or self._frozen(name):
            return None
        if isinstance(target, cst.Attribute) and target.attr.value in _SWITCHES:
            layer = self._layer(target.value, target.attr.value, at)
            if layer is not None:
                return f"a parameter of `nn.{layer}`"
        body = body_of(self.ctx)
        if isinstance(target, cst.Name) and body.reaching(name, at) is not None:
            leaf = body.grad_status(target, at) is Grad.LEAF  # also `requires_grad_()` after the creation
        else:
            found = assignments(self.ctx, target, at)
            leaf = bool(found) and all(_is_leaf(b, d.value, d.index) for b, d in found)
        return "a leaf tensor that requires grad" if leaf else None

    def _layer(self, module: cst.BaseExpression, attr: str, at: int) -> str | None:
        """The torch.nn layer class every construction of `module` in sight uses, if it has `attr`."""
        found = assignments(self.ctx, module, at)
        layers = set()
        for _, d in found:
            call = d.value
            q = self.ctx.qualname(call.func) if isinstance(call, cst.Call) else None
            head, _, last = (q or "").rpartition(".")
            if head not in ("torch.nn", "torch.nn.modules") or last not in _LAYERS:
                return None
            assert isinstance(call, cst.Call)
            if any((a := get_arg(call, k)) is not None and is_name(a.value, "False") for k in _SWITCHES[attr]):
                return None
            layers.add(last)
        return layers.pop() if len(layers) == 1 else None

    def _frozen(self, name: str) -> bool:
        """`requires_grad` is turned off for the tensor or its module somewhere in the file."""
        owners = [name, name.rpartition(".")[0]] if "." in name else [name]
        return any(o in self.ctx.grad_switches.turned_off for o in owners if o)

    def _wrap(self, node: cst.CSTNode) -> NodeFix | None:
        stmt = self.ctx.statement
        if stmt is None:
            return None
        new = wrapped_in_no_grad(self.ctx, stmt)
        if new is None:
            return None
        alone = len(stmt.body) == 1 and (
            stmt.body[0] is node or isinstance(stmt.body[0], cst.Expr) and stmt.body[0].value is node
        )
        title = "Wrap the statement in `with torch.no_grad():`"
        return fix(title, Replace(stmt, new), applicability=SAFE if alone else DISPLAY)


def _is_leaf(body: Body, value: cst.BaseExpression | None, index: int) -> bool:
    return value is not None and body.grad_status(value, index) is Grad.LEAF
