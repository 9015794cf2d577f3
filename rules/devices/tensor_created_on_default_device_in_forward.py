"""TL304 tensor-created-on-default-device-in-forward: New tensor in forward() without device="""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.core.callargs import is_name, with_keyword
from torchlint.engine.core.walk import iter_nodes
from torchlint.engine.rule import SAFE, Invalid, Replace, Rule, fix
from torchlint.engine.semantic.kinds import TENSOR_ONLY_METHODS, Kind, kind_from_qualname
from torchlint.engine.semantic.names import dotted
from torchlint.engine.semantic.values import Where, current_where
from torchlint.engine.torch.default_device import LEGACY, default_device_factory
from torchlint.findings import Severity

_RELOCATE = frozenset({"to", "cuda", "type_as", "to_device"})


class TensorCreatedOnDefaultDevice(Rule):
    code = "TL304"
    analyses = frozenset(
        {
            Analysis.CALL_SITES,
            Analysis.HOST_VALUES,
            Analysis.IS_PROGRAM,
            Analysis.KINDS,
            Analysis.OWN_SUMMARY,
            Analysis.SCOPES,
            Analysis.SETS_DEFAULT_DEVICE,
            Analysis.STAYS_ON_CPU,
            Analysis.VALUES,
        }
    )
    requires = ("forward",)
    name = "tensor-created-on-default-device-in-forward"
    message = (
        "`torch.{fn}(...)` in `forward` creates a CPU tensor whatever device the module is on; it meets "
        "CUDA activations with a device-mismatch error — pass `device={inp}.device`"
    )
    severity = Severity.WARNING
    category = "correctness"
    opt_in = (
        "Measured on 123 public repositories it was not tuned on (bench/realworld, seven sets unseen at "
        "2026-12-03 and 2026-12-04), none of its 9 findings was right (4 wrong, 5 debatable): tensors "
        "used only as Python numbers, indices or for logging, programs that set the default device, and "
        "test doubles or notebooks that only ever run on the CPU. Select it for modules meant to run on a "
        "GPU."
    )
    summary = "New tensor in forward() without device="
    what = (
        "Flags tensor factories (`torch.zeros`, `ones`, `arange`, `randn`, `tensor`, ...) called inside an "
        "`nn.Module`'s `forward` without `device=`, that are not moved afterwards (`.to(...)`, "
        "`.type_as(...)`) and are not host values: a tensor whose every use is a Python index or slice "
        "bound, a `range()`/`int()`/`len()` argument, a `.item()`/`.tolist()` receiver, or the iterable of a "
        "loop whose variable is used only so, also through torch functions of it alone "
        "(`torch.cumsum(torch.tensor(widths), 0)` whose elements slice a list; host_values.py)."
    )
    why = (
        "Factories allocate on the default device (the CPU) regardless of where the module lives. The "
        "model works in CPU tests and fails as soon as it is moved to a GPU. `torch.zeros_like(x)` or "
        "`device=x.device` follows the input."
    )
    example = """\
import torch
from torch import nn

class Mask(nn.Module):
    def forward(self, x):
        mask = torch.ones(x.shape[0], x.shape[1])
        return x * mask
"""
    fix_example = """\
import torch
from torch import nn

class Mask(nn.Module):
    def forward(self, x):
        mask = torch.ones(x.shape[0], x.shape[1], device=x.device)
        return x * mask
"""
    fix_safety = (
        "Safe when the first argument of `forward` is proven a tensor (annotated as one, used with a method "
        "only a tensor has such as `x.size(1)`, or passed to a `torch.nn` layer or `torch.nn.functional`): the "
        "new tensor follows it. Not offered "
        "otherwise (`x` may be a list, whose `.device` raises). Tensors used only as indices or slice bounds "
        "are not reported: they may stay on the CPU."
    )
    VALID = [
        # widths summed on the CPU and read only as Python slice bounds, through the loop variable
        """\
import torch
from torch import nn
class MultiCrop(nn.Module):
    def forward(self, x):
        ends = torch.cumsum(torch.tensor([inp.shape[-1] for inp in x]), 0)
        start = 0
        outs = []
        for end in ends:
            outs.append(self.backbone(torch.cat(x[start:end])))
            start = end
        return torch.cat(outs)
""",
        """\
import torch
from torch import nn
class CharEncoder(nn.Module):
    def forward(self, s: str, pad_to: int = 0):
        return torch.LongTensor([ord(c) for c in s] + [0] * pad_to)
""",
        """\
import torch
from torch import nn
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("pos", torch.arange(128))
    def forward(self, x):
        a = torch.zeros(x.shape, device=x.device)
        b = torch.zeros_like(x)
        c = torch.arange(x.size(1)).to(x.device)
        d = x[torch.arange(x.size(0))]
        e = torch.tensor(0.5)
        f = torch.ones(3, dtype=x.dtype).type_as(x)
        return a + b + c + d * e + f
""",
        """\
import torch
from torch import nn
class M(nn.Module):
    def forward(self, x):
        steps = torch.arange(x.size(1))
        steps = steps.to(x.device)
        return x + steps
""",
        """\
import torch
class NotAModule:
    def forward(self, x):
        return torch.zeros(3)
""",
        """\
import torch
from torch import nn
class DropPath(nn.Module):
    def forward(self, x):
        if self.training and torch.rand(1) < self.p:
            return x
        keep = torch.randperm(x.size(1))
        return x[:, keep] * torch.randint(2, (1,)).item()
""",
    ]
    INVALID = [
        Invalid(
            """\
import torch
from torch import nn
class Attn(nn.Module):
    def forward(self, q, k):
        causal = torch.tril(torch.ones(q.size(1), q.size(1)))
        return causal
""",
            line=5,
            fixed="""\
import torch
from torch import nn
class Attn(nn.Module):
    def forward(self, q, k):
        causal = torch.tril(torch.ones(q.size(1), q.size(1), device=q.device))
        return causal
""",
        ),
        Invalid(
            """\
import torch
from torch import nn
class Pos(nn.Module):
    def forward(self, x):
        return x + torch.FloatTensor(x.size(-1)).uniform_()
""",
            line=5,
        ),
    ]

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if node.name.value == "forward" and self.ctx.in_module_class:
            self.pending: list[tuple[cst.Call, str]] = []  # factory call, its name
            self.exempt: set[cst.BaseExpression] = set()
            self.bound: dict[cst.Call, str] = {}  # factory call -> the name its result is bound to
            self.assigning: list[str] = []  # targets of the assignments being visited
            self.moved_names: set[str] = set()  # later `.to(...)`'d, or used as an index

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        if node.name.value != "forward" or not self.ctx.in_module_class or self.ctx.stays_on_cpu:
            return
        if self.pending and self.ctx.sets_default_device:
            return  # `torch.set_default_device(device)` somewhere in the program: factories may allocate there
        if _annotated_without_tensors(node):
            return  # `forward(self, s: str)`: a module that turns Python values into tensors (a tokenizer)
        inp = _first_tensor_param(node)
        proven = inp is not None and self._proven_tensor(node, inp)
        host = self.ctx.host_values
        for call, fn in self.pending:
            bound = self.bound.get(call, "")
            if call in self.exempt or bound in self.moved_names:
                continue
            if host.host_only(node, bound) if bound else host.host_only_value(node, call):
                continue
            edit = None
            if proven and fn not in LEGACY:
                edit = fix(
                    f"Add `device={inp}.device`",
                    Replace(call, with_keyword(call, "device", f"{inp}.device")),
                    applicability=SAFE,
                )
            self.report(call, self.message.format(fn=fn, inp=inp or "x"), fix=edit)

    def _proven_tensor(self, fn: cst.FunctionDef, name: str) -> bool:
        """`name` is a tensor: by its annotation, by a method only a tensor has (`x.size(1)`), or as the
        input of a `torch.nn` layer (`self.conv(x)`) or a `torch.nn.functional` function."""
        if self.ctx.kind(cst.Name(name)) & Kind.TENSOR:
            return True
        where = current_where(self.ctx)
        for n in iter_nodes(fn.body):
            if not isinstance(n, cst.Call):
                continue
            func = n.func
            if isinstance(func, cst.Attribute) and func.attr.value in TENSOR_ONLY_METHODS and is_name(func.value, name):
                return True
            if (
                n.args
                and n.args[0].keyword is None
                and is_name(n.args[0].value, name)
                and self._takes_tensor(func, where)
            ):
                return True
        return False

    def _takes_tensor(self, func: cst.BaseExpression, where: Where) -> bool:
        q = self.ctx.qualname(func) or ""
        if q.startswith("torch.nn.functional."):
            return True
        built = self.ctx.values.builder(func, where) if isinstance(func, cst.Attribute) else None
        layer = self.ctx.qualname(built[0].func) if built is not None else None
        return (
            layer is not None and layer.startswith("torch.nn.") and kind_from_qualname(layer) & Kind.MODEL != Kind.NONE
        )

    def _in_forward(self) -> bool:
        fn = self.ctx.current_function
        return fn is not None and fn.name.value == "forward" and self.ctx.in_module_class

    def visit_Call(self, node: cst.Call) -> None:
        if not self._in_forward():
            return
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in _RELOCATE | _TO_PYTHON:
            self.exempt.add(_factory_of(func.value))
            if isinstance(func.value, cst.Name):
                self.moved_names.add(func.value.value)
        if dotted(func) in ("self.register_buffer", "int", "float", "bool", "len"):
            self.exempt.update(_factory_of(a.value) for a in node.args)
        fn = default_device_factory(node, self.ctx.imports)
        if fn is None:
            return
        if self.assigning:
            self.bound[node] = self.assigning[-1]
        self.pending.append((node, fn))

    def visit_Comparison(self, node: cst.Comparison) -> None:
        if self._in_forward():  # `if torch.rand(1) < self.p:`
            self.exempt.add(_factory_of(node.left))
            self.exempt.update(_factory_of(c.comparator) for c in node.comparisons)

    def visit_For(self, node: cst.For) -> None:
        if self._in_forward():  # `for i in torch.randperm(n):` yields Python-usable indices
            self.exempt.add(_factory_of(node.iter))

    def visit_If(self, node: cst.If) -> None:
        if self._in_forward():  # `if signed and torch.randint(2, (1,)):` is a Python truth test
            test = node.test
            parts = [test.left, test.right] if isinstance(test, cst.BooleanOperation) else [test]
            self.exempt.update(_factory_of(p) for p in parts)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if self._in_forward():
            for el in node.slice:
                if isinstance(el.slice, cst.Slice):  # `x[:, : torch.tensor(k)]`: a bound stays on the CPU
                    bounds = [b for b in (el.slice.lower, el.slice.upper, el.slice.step) if b is not None]
                    self.exempt.update(_factory_of(b) for b in bounds)
                    self.moved_names.update(b.value for b in bounds if isinstance(b, cst.Name))
                elif isinstance(el.slice, cst.Index):
                    self.exempt.add(_factory_of(el.slice.value))
                    base = el.slice.value  # `x[rows]`, `x[rows.squeeze(-1)]`: an index may stay on the CPU
                    while isinstance(base, cst.Call) and isinstance(base.func, cst.Attribute):
                        base = base.func.value
                    if isinstance(base, cst.Name):
                        self.moved_names.add(base.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        if not self._in_forward() or len(node.targets) != 1:
            return
        target = node.targets[0].target
        if isinstance(target, cst.Name):  # `n = torch.ones(b) * k + 1`: factories below are bound to `n`
            self.assigning.append(target.value)
        elif isinstance(target, cst.Subscript):  # `dst[:k] = src[:k]` copies across devices
            self.moved_names.update(n.value for n in (node.value, *iter_nodes(node.value)) if isinstance(n, cst.Name))

    def leave_Assign(self, node: cst.Assign) -> None:
        if self._in_forward() and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            self.assigning.pop()


_TO_PYTHON = frozenset({"item", "tolist", "numpy"})


def _factory_of(expr: cst.BaseExpression) -> cst.BaseExpression:
    """The innermost receiver of a method chain: `torch.arange(n).unsqueeze(-1)` -> `torch.arange(n)`."""
    while (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Attribute)
        and isinstance(expr.func.value, cst.Call)
        and not isinstance(expr.func.value.func, cst.Name)
    ):
        expr = expr.func.value
    return expr


def _first_tensor_param(fn: cst.FunctionDef) -> str | None:
    params = fn.params.params
    if len(params) < 2:
        return None
    p = params[1]
    if p.default is not None:
        return None
    if p.annotation is not None and "Tensor" not in cst.Module([]).code_for_node(p.annotation.annotation):
        return None
    return p.name.value


def _annotated_without_tensors(fn: cst.FunctionDef) -> bool:
    """The first parameter after `self` is annotated as something other than a tensor (`s: str`), and the
    rest are too or default to a literal (`pad_to=0`)."""
    params = fn.params.params[1:]
    code = cst.Module([]).code_for_node

    def plain(p: cst.Param) -> bool:
        if p.annotation is not None:
            return "tensor" not in code(p.annotation.annotation).lower()
        return isinstance(p.default, (cst.Integer, cst.Float, cst.SimpleString)) or (
            isinstance(p.default, cst.Name) and p.default.value in ("True", "False", "None")
        )

    return bool(params) and params[0].annotation is not None and all(plain(p) for p in params)
