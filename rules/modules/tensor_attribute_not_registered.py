"""TL201 tensor-attribute-not-registered: Plain tensor stored as an nn.Module attribute"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.context import FileContext
from torchlint.engine.core.analyses import Analysis
from torchlint.engine.core.walk import iter_nodes
from torchlint.engine.rule import DISPLAY, SAFE, Invalid, Replace, Rule, fix
from torchlint.engine.semantic.kinds import NO_GRAD, TENSOR_FACTORIES
from torchlint.engine.semantic.names import dotted
from torchlint.findings import Severity

from ._helpers import INIT_METHODS

_NOT_TENSOR_METHODS = frozenset({"item", "tolist", "numpy", "size", "dim", "numel", "any", "all"})


def _registered_later(fn: cst.FunctionDef, attr: str, ctx: FileContext) -> bool:
    """`self.register_buffer("x", self.x)` or `self.x = nn.Parameter(self.x)` elsewhere in the method."""
    for n in iter_nodes(fn.body):
        if isinstance(n, cst.Call) and dotted(n.func) in ("self.register_buffer", "self.register_parameter") and n.args:
            if isinstance(n.args[0].value, cst.SimpleString) and n.args[0].value.evaluated_value == attr:
                return True
        if (
            isinstance(n, cst.Assign)
            and isinstance(n.value, cst.Call)
            and dotted(n.targets[0].target) == f"self.{attr}"
        ):
            if ctx.qualname(n.value.func) in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
                return True
    return False


# Attributes Lightning documents as plain tensors it manages itself (`example_input_array` feeds the summary).
_LIGHTNING_ATTRIBUTES = frozenset({"example_input_array"})
_MOVES = frozenset({"to", "type_as", "cuda"})
_IN_PLACE = frozenset({"add_", "sub_", "mul_", "div_", "copy_", "fill_", "zero_", "clamp_", "lerp_", "addcmul_"})


class TensorAttributeNotRegistered(Rule):
    code = "TL201"
    analyses = frozenset({Analysis.KINDS, Analysis.OWN_SUMMARY})
    requires = ("torch",)
    name = "tensor-attribute-not-registered"
    message = (
        "`self.{attr}` is a plain tensor: `.to(device)`, `state_dict()` and `parameters()` ignore it; "
        "wrap it in `nn.Parameter(...)` or use `self.register_buffer(...)`"
    )
    severity = Severity.ERROR
    category = "correctness"
    opt_in = (
        "Measured on 39 public repositories it was not tuned on (bench/realworld, unseen at 2026-12-03 and "
        "2026-12-04), 0 of its 4 findings were right (4 debatable): teaching cells that show a plain tensor "
        "is not a parameter, or whose forward moves the tensor to the input's device itself, in notebooks "
        "that never move the model nor save its state dict. Select it where models are moved with "
        "`.to(device)` and checkpointed."
    )
    summary = "Plain tensor stored as an nn.Module attribute"
    what = (
        "Flags `self.x = torch.<factory>(...)` in the `__init__` of an `nn.Module` subclass, where the "
        "tensor is neither an `nn.Parameter` nor a registered buffer."
    )
    why = (
        "A plain tensor attribute is invisible to the module machinery: `model.to('cuda')` leaves it on "
        "the CPU (a device-mismatch error at the first forward), `state_dict()` does not save it, and "
        "`parameters()` does not return it, so the optimizer never trains it."
    )
    example = """\
import torch
from torch import nn

class Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = torch.ones(16)
"""
    fix_example = """\
import torch
from torch import nn

class Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.ones(16))
"""
    fix_safety = (
        "Two fixes are offered: `register_buffer` keeps the tensor non-trainable but saved and moved with "
        "the module; `nn.Parameter` makes it trainable. Which one is right is the author's intent, so both "
        "are display-only (offered in the editor, never applied by `--fix`) unless the code proves it. "
        "The buffer fix is safe when the tensor is only read under `torch.no_grad()` (no gradient could "
        "reach it), is reassigned outside `__init__` (a parameter refuses a plain tensor) or is updated in "
        "place outside `no_grad` (a parameter refuses that too). The parameter fix is safe when the tensor "
        "is created with `requires_grad=True`. Either adds a key to `state_dict()`, so checkpoints saved "
        "before the fix load with missing keys — except for a cache another method rebuilds (`forward` "
        "assigns `self.x = ...`): it becomes a non-persistent buffer (`persistent=False`), which moves with "
        "the module and adds no checkpoint key."
    )
    VALID = [
        """\
import torch
from torch import nn
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("mask", torch.ones(3))
        self.w = nn.Parameter(torch.randn(3))
""",
        """\
import torch
class NotAModule:
    def __init__(self):
        self.table = torch.zeros(10)
""",
        """\
import torch
from torch import nn
class M(nn.Module):
    def forward(self, x):
        self.last = torch.zeros_like(x)
        return x
""",
        """\
import torch
from torch import nn
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.randn(3, 3)
        self.w = nn.Parameter(self.w)
        self.n = torch.tensor([1, 2]).sum().item()
""",
    ]
    INVALID = [
        Invalid(
            """\
import torch
import torch.nn as nn
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.mask = torch.ones(3)
""",
            line=6,
            fixed="""\
import torch
import torch.nn as nn
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("mask", torch.ones(3))
""",
            alternatives=(
                """\
import torch
import torch.nn as nn
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.mask = nn.Parameter(torch.ones(3))
""",
            ),
        ),
        Invalid(
            """\
import torch
from torch.nn import Module
class Base(Module):
    pass
class M(Base):
    def __init__(self):
        super().__init__()
        self.pos = torch.arange(10)
""",
            line=8,
            fixed="""\
import torch
from torch.nn import Module
class Base(Module):
    pass
class M(Base):
    def __init__(self):
        super().__init__()
        self.register_buffer("pos", torch.arange(10))
""",
            alternatives=(
                """\
import torch
from torch.nn import Module
class Base(Module):
    pass
class M(Base):
    def __init__(self):
        super().__init__()
        self.pos = torch.nn.Parameter(torch.arange(10))
""",
            ),
        ),
        Invalid(
            """\
import torch
from torch import nn
class M(nn.Module):
    def __init__(self, device):
        super().__init__()
        self.table = torch.zeros(4, 4).float().to(device)
""",
            line=6,
            fixed="""\
import torch
from torch import nn
class M(nn.Module):
    def __init__(self, device):
        super().__init__()
        self.register_buffer("table", torch.zeros(4, 4).float().to(device))
""",
            alternatives=(
                """\
import torch
from torch import nn
class M(nn.Module):
    def __init__(self, device):
        super().__init__()
        self.table = nn.Parameter(torch.zeros(4, 4).float().to(device))
""",
            ),
        ),
        # a running statistic, updated in place outside no_grad: a parameter would refuse that
        Invalid(
            """\
import torch
from torch import nn
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.total = torch.zeros(4)
    def forward(self, x):
        self.total.add_(x.detach().sum(0))
        return x
""",
            line=6,
            fixed="""\
import torch
from torch import nn
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("total", torch.zeros(4))
    def forward(self, x):
        self.total.add_(x.detach().sum(0))
        return x
""",
            alternatives=(
                """\
import torch
from torch import nn
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.total = nn.Parameter(torch.zeros(4))
    def forward(self, x):
        self.total.add_(x.detach().sum(0))
        return x
""",
            ),
        ),
        # created with requires_grad=True: meant to be trained
        Invalid(
            """\
import torch
from torch import nn
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.randn(4, requires_grad=True)
    def forward(self, x):
        return x * self.w
""",
            line=6,
            fixed="""\
import torch
from torch import nn
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4, requires_grad=True))
    def forward(self, x):
        return x * self.w
""",
            alternatives=(
                """\
import torch
from torch import nn
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("w", torch.randn(4, requires_grad=True))
    def forward(self, x):
        return x * self.w
""",
            ),
        ),
    ]

    def visit_Assign(self, node: cst.Assign) -> None:
        fn = self.ctx.current_function
        if fn is None or fn.name.value not in INIT_METHODS or not self.ctx.in_module_class:
            return
        if len(node.targets) != 1 or not isinstance(node.value, cst.Call):
            return
        target = dotted(node.targets[0].target)
        if not target or not target.startswith("self.") or target.count(".") != 1:
            return
        factory = node.value  # `torch.zeros(3).float().to(device)`: look through the method chain
        while isinstance(factory.func, cst.Attribute) and isinstance(factory.func.value, cst.Call):
            if factory.func.attr.value in _NOT_TENSOR_METHODS:
                return
            factory = factory.func.value
        q = self.ctx.qualname(factory.func)
        if q is None or q.rpartition(".")[0] != "torch" or q.rpartition(".")[2] not in TENSOR_FACTORIES:
            return
        attr = target[5:]
        if _registered_later(fn, attr, self.ctx) or self._managed(attr) or _scalar(factory, q):
            return
        value = self.ctx.module.code_for_node(node.value)
        trained = any(
            a.keyword is not None and a.keyword.value == "requires_grad" and dotted(a.value) == "True"
            for a in factory.args
        )
        state = self._state(attr)
        # a cache another method rebuilds is not model state: a non-persistent buffer moves with the module
        # and keeps the checkpoint's keys as they were
        rebuilt = self._rebuilt(attr)
        buffer = fix(
            f"Register `{attr}` as a {'non-persistent ' if rebuilt else ''}buffer",
            Replace(node, f'self.register_buffer("{attr}", {value}{", persistent=False" if rebuilt else ""})'),
            applicability=SAFE if state and not trained else DISPLAY,
        )
        parameter = fix(
            f"Make `{attr}` an nn.Parameter",
            Replace(node.value, f"{self._parameter_name()}({value})"),
            applicability=SAFE if trained and not state else DISPLAY,
        )
        first, second = (parameter, buffer) if parameter.applicability is SAFE else (buffer, parameter)
        self.report(node, self.message.format(attr=attr), fix=first, alternatives=(second,))

    def _state(self, attr: str) -> bool:
        """`self.<attr>` is used as state, never as a trained weight: only read under `no_grad`,
        reassigned outside `__init__`, or updated in place outside `no_grad`."""
        cls = self.ctx.current_class
        if cls is None:
            return False
        quiet: set[cst.CSTNode] = set()  # nodes under `with torch.no_grad()` or in a no_grad-decorated method
        for n in iter_nodes(cls):
            if isinstance(n, cst.With) and any(self._no_grad(item.item) for item in n.items):
                quiet.update(iter_nodes(n.body))
            elif isinstance(n, cst.FunctionDef) and any(self._no_grad(d.decorator) for d in n.decorators):
                quiet.update(iter_nodes(n.body))
        uses: list[cst.CSTNode] = []
        for method in (n for n in iter_nodes(cls) if isinstance(n, cst.FunctionDef)):
            in_init = method.name.value in INIT_METHODS
            for n in iter_nodes(method.body):
                if isinstance(n, cst.Assign) and any(dotted(t.target) == f"self.{attr}" for t in n.targets):
                    if not in_init:
                        return True
                elif isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute):
                    if n.func.attr.value in _IN_PLACE and dotted(n.func.value) == f"self.{attr}" and n not in quiet:
                        return True
                if isinstance(n, cst.Attribute) and n.attr.value == attr and dotted(n.value) == "self":
                    uses.append(n)
        reads = [n for n in uses if n not in self._assigned(cls, attr)]
        return bool(reads) and all(n in quiet for n in reads)

    def _rebuilt(self, attr: str) -> bool:
        """`self.<attr> = ...` in a method other than the init methods (`forward` rebuilding a cache)."""
        cls = self.ctx.current_class
        return cls is not None and any(
            isinstance(n, cst.Assign) and any(dotted(t.target) == f"self.{attr}" for t in n.targets)
            for method in iter_nodes(cls)
            if isinstance(method, cst.FunctionDef) and method.name.value not in INIT_METHODS
            for n in iter_nodes(method.body)
        )

    def _no_grad(self, expr: cst.BaseExpression) -> bool:
        return self.ctx.qualname(expr.func if isinstance(expr, cst.Call) else expr) in NO_GRAD

    def _managed(self, attr: str) -> bool:
        """Lightning's documented `example_input_array`, or a tensor moved at every use (`.type_as(w)`)."""
        cls = self.ctx.current_class
        if cls is None:
            return False
        if attr in _LIGHTNING_ATTRIBUTES and any(
            (self.ctx.qualname(b.value) or "").startswith(("lightning", "pytorch_lightning")) for b in cls.bases
        ):
            return True
        reads = [
            n
            for n in iter_nodes(cls)
            if isinstance(n, cst.Attribute) and n.attr.value == attr and dotted(n.value) == "self"
        ]
        uses = [n for n in reads if n not in self._assigned(cls, attr)]
        return bool(uses) and all(self._moved_at(cls, n) for n in uses)

    def _assigned(self, cls: cst.ClassDef, attr: str) -> set[cst.CSTNode]:
        return {
            t.target
            for n in iter_nodes(cls)
            if isinstance(n, cst.Assign)
            for t in n.targets
            if dotted(t.target) == f"self.{attr}"
        }

    def _moved_at(self, cls: cst.ClassDef, read: cst.Attribute) -> bool:
        """`self.x.to(...)` / `self.x.type_as(...)` / `self.x.cuda()`: the read is moved where it is used."""
        for n in iter_nodes(cls):
            if isinstance(n, cst.Attribute) and n.value is read:
                return n.attr.value in _MOVES
        return False

    def _parameter_name(self) -> str:
        """How this file spells nn.Parameter (falls back to torch.nn.Parameter)."""
        for local, q in self.ctx.imports.table.items():
            if q == "torch.nn":
                return f"{local}.Parameter"
            if q == "torch.nn.Parameter":
                return local
        return "torch.nn.Parameter"


def _scalar(factory: cst.Call, q: str) -> bool:
    """`torch.tensor(0.0625)`: a 0-dim constant, which PyTorch combines with tensors on any device."""
    if q not in ("torch.tensor", "torch.as_tensor") or not factory.args:
        return False
    value = factory.args[0].value
    if isinstance(value, cst.UnaryOperation):
        value = value.expression
    return isinstance(value, (cst.Integer, cst.Float))
