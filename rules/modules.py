"""nn.Module definition rules (TL2xx): state that PyTorch cannot see."""

from __future__ import annotations

import libcst as cst

from torchlint.engine.kinds import TENSOR_FACTORIES
from torchlint.engine.names import dotted
from torchlint.engine.rule import Invalid, Replace, Rule, fix
from torchlint.model import Severity

_INIT_METHODS = frozenset({"__init__", "reset_parameters", "_reset_parameters", "build", "setup"})


class TensorAttributeNotRegistered(Rule):
    code = "TL201"
    name = "tensor-attribute-not-registered"
    message = (
        "`self.{attr}` is a plain tensor: `.to(device)`, `state_dict()` and `parameters()` ignore it; "
        "wrap it in `nn.Parameter(...)` or use `self.register_buffer(...)`"
    )
    severity = Severity.ERROR
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
        "Two fixes are offered. `register_buffer` (the default for `--fix`) keeps the tensor "
        "non-trainable but saved and moved with the module; `nn.Parameter` makes it trainable. Either "
        "adds a key to `state_dict()`, so checkpoints saved before the fix load with missing keys."
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
        ),
    ]

    def visit_Assign(self, node: cst.Assign) -> None:
        fn = self.ctx.current_function
        if fn is None or fn.name.value not in _INIT_METHODS or not self.ctx.in_module_class:
            return
        if len(node.targets) != 1 or not isinstance(node.value, cst.Call):
            return
        target = dotted(node.targets[0].target)
        if not target or not target.startswith("self.") or target.count(".") != 1:
            return
        q = self.ctx.qualname(node.value.func)
        if q is None or not q.startswith("torch.") or q.rpartition(".")[2] not in TENSOR_FACTORIES:
            return
        if q.rpartition(".")[0] != "torch":
            return
        attr = target[5:]
        value = self.ctx.module.code_for_node(node.value)
        parameter = self._parameter_name()
        self.report(
            node,
            self.message.format(attr=attr),
            fix=fix(f'Register `{attr}` as a buffer', Replace(node, f'self.register_buffer("{attr}", {value})')),
            alternatives=(fix(f"Make `{attr}` an nn.Parameter", Replace(node.value, f"{parameter}({value})")),),
        )

    def _parameter_name(self) -> str:
        """How this file spells nn.Parameter (falls back to torch.nn.Parameter)."""
        for local, q in self.ctx.imports.table.items():
            if q == "torch.nn":
                return f"{local}.Parameter"
            if q == "torch.nn.Parameter":
                return local
        return "torch.nn.Parameter"
