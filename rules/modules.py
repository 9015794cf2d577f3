"""nn.Module definition rules (TL2xx): state that PyTorch cannot see."""

from __future__ import annotations

import libcst as cst

from torchlint.engine.kinds import TENSOR_FACTORIES, Kind
from torchlint.engine.names import dotted
from torchlint.engine.rule import InsertBefore, Invalid, Replace, Rule, fix
from torchlint.engine.walk import block_statements, iter_nodes, iter_statements, small_statements
from torchlint.findings import Severity

_INIT_METHODS = frozenset({"__init__", "reset_parameters", "_reset_parameters", "build", "setup"})
_NOT_TENSOR_METHODS = frozenset({"item", "tolist", "numpy", "size", "dim", "numel", "any", "all"})


def _registered_later(fn: cst.FunctionDef, attr: str, ctx) -> bool:
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


class TensorAttributeNotRegistered(Rule):
    code = "TL201"
    requires = ("torch",)
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
        factory = node.value  # `torch.zeros(3).float().to(device)`: look through the method chain
        while isinstance(factory.func, cst.Attribute) and isinstance(factory.func.value, cst.Call):
            if factory.func.attr.value in _NOT_TENSOR_METHODS:
                return
            factory = factory.func.value
        q = self.ctx.qualname(factory.func)
        if q is None or q.rpartition(".")[0] != "torch" or q.rpartition(".")[2] not in TENSOR_FACTORIES:
            return
        attr = target[5:]
        if _registered_later(fn, attr, self.ctx):
            return
        value = self.ctx.module.code_for_node(node.value)
        parameter = self._parameter_name()
        self.report(
            node,
            self.message.format(attr=attr),
            fix=fix(f"Register `{attr}` as a buffer", Replace(node, f'self.register_buffer("{attr}", {value})')),
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


_CONTAINERS = {"list": "ModuleList", "dict": "ModuleDict"}
_PARAM_CONTAINERS = {"list": "ParameterList", "dict": "ParameterDict"}


class ModulesInPlainContainer(Rule):
    code = "TL202"
    requires = ("self.",)
    name = "modules-in-plain-container"
    message = (
        "`self.{attr}` holds {what} in a plain Python {kind}: they are not registered, so `parameters()`, "
        "`.to(device)` and `state_dict()` skip them; use `nn.{container}`"
    )
    severity = Severity.ERROR
    summary = "Submodules or parameters kept in a plain list/dict"
    what = (
        "Flags `self.x = [nn.Linear(...), ...]`, list comprehensions of modules, dicts of modules, lists of "
        "`nn.Parameter`, and `self.x = []` later filled with `self.x.append(<module>)`, inside an "
        "`nn.Module` subclass."
    )
    why = (
        "`nn.Module` discovers submodules and parameters through attribute assignment of `Module` / "
        "`Parameter` objects only. Inside a list or dict they are invisible: the optimizer never receives "
        "their weights (they stay at their random initialisation), `model.to('cuda')` leaves them on the "
        "CPU, and checkpoints silently omit them."
    )
    example = """\
from torch import nn

class MLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.layers = [nn.Linear(a, b) for a, b in zip(sizes, sizes[1:])]
"""
    fix_example = """\
from torch import nn

class MLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(a, b) for a, b in zip(sizes, sizes[1:])])
"""
    fix_safety = (
        "Safe for code that iterates, indexes or calls `len()` on the container (ModuleList/ModuleDict "
        "support these). Checkpoints gain the container's keys, so old checkpoints load with missing keys."
    )
    VALID = [
        """\
from torch import nn
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
        self.sizes = [4, 8, 16]
        self.names = {"a": 1}
""",
        """\
from torch import nn
class NotAModule:
    def __init__(self):
        self.layers = [nn.Linear(4, 4)]
""",
        """\
from torch import nn
class M(nn.Module):
    def __init__(self, a, b):
        super().__init__()
        self.pair = nn.ModuleDict({"a": nn.Linear(a, b)})
        self.losses = [nn.MSELoss()]
""",
        """\
from torch import nn
class Block(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.layers = []
        for _ in range(n):
            self.layers.append(nn.Linear(4, 4))
        self.layers = nn.ModuleList(self.layers)
""",
        """\
from torch import nn
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = [nn.Conv2d(3, 3, 1), nn.ReLU()]
        for i, layer in enumerate(self.layers):
            self.add_module(str(i), layer)
""",
    ]
    INVALID = [
        Invalid(
            """\
import torch.nn as nn
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = {"cls": nn.Linear(8, 2), "box": nn.Linear(8, 4)}
""",
            line=5,
            fixed="""\
import torch.nn as nn
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleDict({"cls": nn.Linear(8, 2), "box": nn.Linear(8, 4)})
""",
        ),
        Invalid(
            """\
import torch
from torch import nn
class M(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.blocks = []
        for _ in range(n):
            self.blocks.append(nn.Conv2d(3, 3, 3))
""",
            line=6,
            fixed="""\
import torch
from torch import nn
class M(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.blocks = nn.ModuleList()
        for _ in range(n):
            self.blocks.append(nn.Conv2d(3, 3, 3))
""",
        ),
        Invalid(
            """\
import torch
from torch import nn
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.scales = [nn.Parameter(torch.ones(1)) for _ in range(4)]
""",
            line=6,
        ),
        Invalid(
            """\
from torch import nn
class M(nn.Module):
    def __init__(self):
        super().__init__()
        enc = nn.GRU(8, 8)
        dec = nn.Linear(8, 8)
        self.parts = [enc, dec]
""",
            line=7,
        ),
    ]

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if not self.ctx.in_module_class or node.name.value not in _INIT_METHODS:
            return
        empty: dict[str, cst.Assign] = {}  # `self.x = []` not yet known to hold modules
        found: dict[str, tuple] = {}  # target -> report arguments
        for stmt in iter_statements(block_statements(node.body)):
            for small in small_statements(stmt):
                if isinstance(small, cst.Assign) and len(small.targets) == 1:
                    self._assign(small, empty, found)
                elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                    if dotted(small.value.func) in ("self.add_module", "self.register_module"):
                        return  # registered by hand (nn.Sequential-style numbered children)
                    self._append(small.value, empty, found)
        for args in found.values():
            self._report(*args)

    def _assign(self, node: cst.Assign, empty: dict, found: dict) -> None:
        target = dotted(node.targets[0].target)
        if not target or not target.startswith("self.") or target.count(".") != 1:
            return
        found.pop(target, None)  # re-assigned later, e.g. `self.layers = nn.ModuleList(self.layers)`
        value = node.value
        if isinstance(value, (cst.List, cst.Tuple, cst.Dict)) and not value.elements:
            empty[target] = node
            return
        empty.pop(target, None)
        kind = "dict" if isinstance(value, (cst.Dict, cst.DictComp)) else "list"
        items = _container_items(value)
        if not items:
            return
        what = {self._element(v) for v in items}
        if len(what) == 1 and None not in what:
            found[target] = (node, target[5:], what.pop(), kind, value)

    def _append(self, call: cst.Call, empty: dict, found: dict) -> None:
        func = call.func
        if (
            not isinstance(func, cst.Attribute)
            or func.attr.value not in ("append", "extend", "insert")
            or not call.args
        ):
            return
        target = dotted(func.value)
        if target not in empty:
            return
        what = self._element(call.args[-1].value)
        if what is not None:
            node = empty.pop(target)
            found[target] = (node, target[5:], what, "dict" if isinstance(node.value, cst.Dict) else "list", node.value)

    def _element(self, expr: cst.BaseExpression) -> str | None:
        """'module' / 'parameter' for a constructor call making one (or a local bound to one), else None."""
        if isinstance(expr, cst.Name) and self.ctx.scope is not None:
            kind = self.ctx.scope.bindings.get(expr.value, Kind.NONE)
            return "module" if kind & Kind.MODEL and not kind & Kind.CRITERION else None
        if not isinstance(expr, cst.Call):
            return None
        q = self.ctx.qualname(expr.func)
        if q in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
            return "parameter"
        kind = self.ctx.kind(expr)
        if kind & Kind.MODEL and not kind & Kind.CRITERION:
            return "module"
        return None

    def _report(self, node: cst.Assign, attr: str, what: str, kind: str, value) -> None:
        container = (_PARAM_CONTAINERS if what == "parameter" else _CONTAINERS)[kind]
        nn = _nn_name(self.ctx)
        code = self.ctx.module.code_for_node
        inner = code(value)
        if isinstance(value, cst.Tuple):  # a tuple's parentheses lie outside its position: rewrite the statement
            inner = "[" + ", ".join(code(e.value) for e in value.elements) + "]"
        new = f"{nn}.{container}()" if not _container_items(value) else f"{nn}.{container}({inner})"
        target = code(node.targets[0].target)
        self.report(
            node,
            self.message.format(attr=attr, what=f"{what}s", kind=kind, container=container),
            fix=fix(f"Wrap in `nn.{container}`", Replace(node, f"{target} = {new}")),
        )


def _container_items(value: cst.BaseExpression) -> list | None:
    if isinstance(value, (cst.List, cst.Tuple)):
        return [e.value for e in value.elements if isinstance(e, cst.Element)]
    if isinstance(value, cst.Dict):
        return [e.value for e in value.elements if isinstance(e, cst.DictElement)]
    if isinstance(value, (cst.ListComp, cst.GeneratorExp)):
        return [value.elt]
    if isinstance(value, cst.DictComp):
        return [value.value]
    return None


def _nn_name(ctx) -> str:
    """How this file spells `torch.nn` (falls back to `torch.nn`)."""
    for local, q in ctx.imports.table.items():
        if q == "torch.nn":
            return local
    return "torch.nn"


class ForwardCalledDirectly(Rule):
    code = "TL203"
    requires = ("forward",)
    name = "forward-called-directly"
    message = "`{recv}.forward(...)` skips the module's hooks (and `torch.compile`/FSDP wrappers); call `{recv}(...)`"
    severity = Severity.WARNING
    summary = "model.forward(x) instead of model(x)"
    what = "Flags `m.forward(...)` where `m` is an `nn.Module` instance (not `super().forward(...)`)."
    why = (
        "`Module.__call__` runs forward pre-hooks and hooks, which is how DDP synchronises, how FSDP "
        "gathers parameters, how quantization observers and many profilers work. Calling `.forward` "
        "directly silently bypasses all of them."
    )
    example = "import torch\n\nmodel = torch.nn.Linear(4, 2)\ny = model.forward(x)\n"
    fix_example = "import torch\n\nmodel = torch.nn.Linear(4, 2)\ny = model(x)\n"
    fix_safety = "Safe: `model(x)` calls `forward` with the same arguments, plus the registered hooks."
    VALID = [
        """\
from torch import nn
class M(nn.Linear):
    def forward(self, x):
        return super().forward(x) * 2
""",
        """\
from torch import nn
class M(nn.Linear):
    def forward(self, x):
        return nn.Linear.forward(self, x)
""",
        "y = model(x)\n",
        "result = graph.forward(x)\n",
        """\
import torch
from torch import nn
class XIELU(nn.Module):
    def __init__(self):
        super().__init__()
        self._cuda_obj = torch.classes.xielu.XIELU()
    def forward(self, x):
        return self._cuda_obj.forward(x)
""",
    ]
    INVALID = [
        Invalid(
            "from torch import nn\nnet = nn.Sequential(nn.Linear(2, 2))\nout = net.forward(inputs, )\n",
            line=3,
            fixed="from torch import nn\nnet = nn.Sequential(nn.Linear(2, 2))\nout = net(inputs, )\n",
        ),
        Invalid(
            """\
from torch import nn
class Wrapper(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(4, 4)
    def forward(self, x):
        return self.encoder.forward(x)
""",
            line=7,
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value != "forward":
            return
        recv = func.value
        if isinstance(recv, cst.Call) or (isinstance(recv, cst.Name) and recv.value == "self"):
            return  # super().forward(...), self.forward(...)
        if self.ctx.qualname(recv) is not None or (
            isinstance(recv, cst.Name) and recv.value in self.ctx.semantics.classes.by_name
        ):
            return  # nn.Linear.forward(self, x): an explicit base-class call
        if not self.ctx.kind(recv) & Kind.MODEL:
            return  # e.g. a compiled extension object with its own `forward`
        text = self.ctx.module.code_for_node(recv)
        self.report(node, self.message.format(recv=text), fix=fix(f"Call `{text}(...)`", Replace(func, recv)))


class MissingSuperInit(Rule):
    code = "TL204"
    requires = ("__init__",)
    name = "missing-super-init"
    message = (
        "`{cls}.__init__` never calls `super().__init__()`: the first `self.<attr> = ...` raises "
        "`AttributeError: cannot assign module before Module.__init__() call`"
    )
    severity = Severity.ERROR
    summary = "nn.Module subclass __init__ without super().__init__()"
    what = "Flags the `__init__` of an `nn.Module` subclass that sets attributes but never calls the base `__init__`."
    why = (
        "`Module.__init__` creates the dictionaries that hold parameters, buffers and submodules. Without "
        "it, assigning a submodule or parameter raises, and even plain attributes leave the module "
        "half-built (`.to()`, `state_dict()` and hooks fail later)."
    )
    example = """\
from torch import nn

class Net(nn.Module):
    def __init__(self):
        self.fc = nn.Linear(4, 2)
"""
    fix_example = """\
from torch import nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
"""
    fix_safety = "Safe: inserts `super().__init__()` as the first statement (after a docstring)."
    VALID = [
        """\
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.fc = nn.Linear(4, 2)
""",
        """\
from torch import nn
class Net(nn.Module):
    def __init__(self):
        nn.Module.__init__(self)
        self.fc = nn.Linear(4, 2)
""",
        """\
class Plain:
    def __init__(self):
        self.x = 1
""",
        """\
from torch import nn
class Net(nn.Module):
    def __init__(self, *args):
        self.__init_from(*args)
""",
    ]
    INVALID = [
        Invalid(
            '''\
import torch.nn as nn
class Net(nn.Module):
    def __init__(self, n):
        """A net."""
        self.n = n
        self.fc = nn.Linear(n, 2)
''',
            line=3,
            fixed='''\
import torch.nn as nn
class Net(nn.Module):
    def __init__(self, n):
        """A net."""
        super().__init__()
        self.n = n
        self.fc = nn.Linear(n, 2)
''',
        ),
    ]

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if node.name.value != "__init__" or not self.ctx.in_module_class:
            return
        if not isinstance(node.body, cst.IndentedBlock):
            return
        assigns = False
        for n in iter_nodes(node.body, into_functions=False):
            if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value.startswith("__init"):
                return  # super().__init__(), Base.__init__(self), self.__init_x()
            if isinstance(n, cst.AssignTarget) and (dotted(n.target) or "").startswith("self."):
                assigns = True
        if not assigns:
            return
        body = node.body.body
        first = body[0]
        anchor = body[1] if _is_docstring(first) and len(body) > 1 else first
        edit = fix("Insert `super().__init__()`", InsertBefore(anchor, "super().__init__()"))
        self.report(node.name, self.message.format(cls=self.ctx.current_class.name.value), fix=edit)


def _is_docstring(stmt: cst.BaseStatement) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )
