"""TL306 created-then-moved: torch.zeros(...).to(device) in forward or a loop: a host allocation and a copy each time"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.core.callargs import get_arg, has_star, with_keyword
from torchlint.engine.core.walk import iter_nodes
from torchlint.engine.rule import SAFE, UNSAFE, Invalid, NodeFix, Replace, Rule, fix
from torchlint.findings import Severity

from ._helpers import is_device

# Factories whose result does not depend on the device they run on.
_DETERMINISTIC = frozenset("zeros ones empty full arange linspace logspace eye tensor".split())
# Random factories draw from the CPU generator here and from the device's with `device=`: other numbers.
_RANDOM = frozenset("rand randn randint randperm".split())
_MOVE_KEYWORDS = frozenset({"device", "dtype", "non_blocking"})


class CreatedThenMoved(Rule):
    code = "TL306"
    analyses = frozenset(
        {Analysis.CALL_SITES, Analysis.KINDS, Analysis.LOCAL_FUNCTIONS, Analysis.OWN_SUMMARY, Analysis.SCOPES}
    )
    requires = (".to(", ".cuda(")
    name = "created-then-moved"
    message = (
        "`torch.{fn}(...){move}` {where}: the tensor is allocated on the CPU and copied to the device every "
        "time — pass `device=` to the factory"
    )
    severity = Severity.INFO
    category = "performance"
    opt_in = (
        "Measured on 25 public repositories it was not tuned on (bench/realworld, unseen at 2026-12-03 and "
        "2026-12-04), 0 of its 4 findings were right (4 debatable): zero- or few-element tensors and one "
        "example input per epoch, whose host-to-device copy is negligible. Select it for large tensors made "
        "in `forward` or the step loop."
    )
    summary = "Tensor factory immediately moved with .to(device)/.cuda() in forward or a loop"
    what = (
        "Flags a tensor factory (`torch.zeros`, `ones`, `empty`, `full`, `rand`, `randn`, `randint`, "
        "`randperm`, `arange`, `linspace`, `logspace`, `eye`, and `torch.tensor` of literal numbers) "
        "without `device=` whose result is moved in the same expression — `.to(device)` or `.cuda()` — "
        "inside an `nn.Module`'s `forward` or inside a loop that does the per-step work (not in `__init__`, which "
        "runs once, nor in an epoch loop — one that runs another loop each iteration, itself or through a "
        "function of this file — where the copy happens once per epoch). The "
        "`.to(...)` argument must be a proven device (a device string, `torch.device(...)`, `x.device`, a "
        "variable holding a `torch.device`): `.to(other_tensor)` and `.to(torch.float16)` are not flagged. "
        "`torch.tensor` of a variable is not flagged: its data lives on the host either way."
    )
    why = (
        "The factory fills a CPU tensor, then `.to(device)` allocates device memory and copies it over: a "
        "host allocation, a host-to-device transfer and (for pinned-less memory) a synchronisation, at every "
        "step. With `device=` the tensor is created on the device directly."
    )
    example = """\
import torch
from torch import nn

class Pos(nn.Module):
    def forward(self, x):
        steps = torch.arange(x.size(1)).to(x.device)
        return x + steps
"""
    fix_example = """\
import torch
from torch import nn

class Pos(nn.Module):
    def forward(self, x):
        steps = torch.arange(x.size(1), device=x.device)
        return x + steps
"""
    fix_safety = (
        "Safe for deterministic factories (`zeros`, `ones`, `empty`, `full`, `arange`, `linspace`, `logspace`, "
        "`eye`, `torch.tensor` of literal numbers): the same values, dtype and device. Unsafe when the move "
        "also casts (`.to(device, torch.float16)`): the factory then computes in the new dtype instead of "
        "casting a float32 result (`arange` steps, rounding), and for the random factories: on the device "
        "they draw from the device's generator, so the numbers (and seeded reproducibility) change. No fix "
        "when the move has other arguments (`copy=`, `memory_format=`), both calls give a dtype, or "
        "`.cuda(i)` names a device."
    )
    VALID = [
        """\
import torch
from torch import nn
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("pos", torch.arange(128))
        self.table = torch.zeros(10).to("cuda")
    def forward(self, x):
        return x + torch.zeros(x.shape, device=x.device)
""",
        """\
import torch
device = torch.device("cuda")
mask = torch.ones(64, 64).to(device)
for x in loader:
    y = x.to(device) * mask
""",
        """\
import torch
for x in loader:
    a = torch.zeros(3).to(x)
    b = torch.ones(3).to(torch.float16)
    c = torch.tensor(labels).to("cuda")
    d = (torch.arange(5) * 2).to("cuda")
""",
        """\
import torch
def step(x, cuda):
    for _ in range(3):
        x = x + torch.zeros(3).to(cuda)
    return x
""",
        """\
import torch
device = torch.device("cuda")
for epoch in range(10):
    state = torch.zeros(2, 16, 64).to(device)
    for x in loader:
        state = state + x.to(device)
""",
        """\
import torch
device = torch.device("cuda")

def train(loader):
    for x in loader:
        model(x.to(device)).sum().backward()

for epoch in range(10):
    train(loader)
    sample = torch.randn(8, 20).to(device)
""",
    ]
    INVALID = [
        Invalid(
            """\
import torch
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
for x, y in loader:
    h = torch.zeros(2, x.size(0), 128).to(device)
""",
            line=4,
            fixed="""\
import torch
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
for x, y in loader:
    h = torch.zeros(2, x.size(0), 128, device=device)
""",
        ),
        Invalid(
            """\
import torch
from torch import nn
class Noise(nn.Module):
    def forward(self, x):
        return x + torch.randn(x.shape).cuda()
""",
            line=5,
            fixed="""\
import torch
from torch import nn
class Noise(nn.Module):
    def forward(self, x):
        return x + torch.randn(x.shape, device="cuda")
""",
        ),
        Invalid(
            """\
import torch
for batch in loader:
    w = torch.tensor([1.0, 2.0, 0.5]).to("cuda:0", torch.float16, non_blocking=True)
""",
            line=3,
            fixed="""\
import torch
for batch in loader:
    w = torch.tensor([1.0, 2.0, 0.5], device="cuda:0", dtype=torch.float16)
""",
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in ("to", "cuda"):
            return
        factory = func.value
        if not isinstance(factory, cst.Call) or has_star(factory) or get_arg(factory, "device") is not None:
            return
        q = self.ctx.qualname(factory.func)
        fn = q[6:] if q is not None and q.startswith("torch.") else ""
        if fn not in _DETERMINISTIC | _RANDOM or (fn == "tensor" and not _literal_numbers(factory)):
            return
        where = self._where()
        if where is None:
            return
        if func.attr.value == "to":
            device = get_arg(node, "device", 0)
            if device is None or has_star(node) or not is_device(self.ctx, device.value):
                return
        move = ".cuda()" if func.attr.value == "cuda" else ".to(...)"
        self.report(node, self.message.format(fn=fn, move=move, where=where), fix=_fix(node, factory, fn))

    def _where(self) -> str | None:
        fn = self.ctx.current_function
        if fn is not None and fn.name.value == "__init__":
            return None
        if fn is not None and fn.name.value == "forward" and self.ctx.in_module_class:
            return "in `forward`"
        if self.ctx.loops and (fn is None or _inside(self.ctx.loops[-1], fn)):
            return None if self._outer(self.ctx.loops[-1]) else "in a loop"
        return None

    def _outer(self, loop: cst.For | cst.While) -> bool:
        """The loop runs another loop per iteration (directly or through a function of this file): an
        allocation there happens once per epoch, not once per step, and costs nothing worth a finding."""
        local = self.ctx.local_functions()
        for node in iter_nodes(loop.body, into_functions=False):
            if isinstance(node, (cst.For, cst.While)):
                return True
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in local:
                callee = local[node.func.value]
                if any(isinstance(n, (cst.For, cst.While)) for n in iter_nodes(callee.body, into_functions=False)):
                    return True
        return False


def _inside(loop: cst.CSTNode, fn: cst.FunctionDef) -> bool:
    """The innermost loop is in this function (not a loop around the function's definition)."""
    return any(n is loop for n in iter_nodes(fn.body, into_functions=False))


def _fix(move: cst.Call, factory: cst.Call, fn: str) -> NodeFix | None:
    if isinstance(move.func, cst.Attribute) and move.func.attr.value == "cuda":
        if move.args and any(a.keyword is None or a.keyword.value != "non_blocking" for a in move.args):
            return None
        device, dtype = '"cuda"', None
    else:
        if any(a.keyword is not None and a.keyword.value not in _MOVE_KEYWORDS for a in move.args):
            return None
        positional = [a for a in move.args if a.keyword is None]
        if len(positional) > 2:
            return None
        device_arg = get_arg(move, "device", 0)
        dtype_arg = get_arg(move, "dtype", 1)
        assert device_arg is not None
        device = cst.Module([]).code_for_node(device_arg.value)
        dtype = cst.Module([]).code_for_node(dtype_arg.value) if dtype_arg is not None else None
    if dtype is not None and get_arg(factory, "dtype") is not None:
        return None
    new = with_keyword(factory, "device", device)
    if dtype is not None:
        new = with_keyword(new, "dtype", dtype)
    return fix(
        "Pass `device=` to the factory",
        Replace(move, new),
        applicability=UNSAFE if fn in _RANDOM or dtype is not None else SAFE,
        risk="other random numbers or rounding",
    )


def _literal_numbers(call: cst.Call) -> bool:
    """`torch.tensor([1.0, 2.0])`, `torch.tensor(0.5)`: a constant rebuilt on the host every time."""
    data = get_arg(call, "data", 0)
    if data is None:
        return False
    return all(
        isinstance(n, (cst.Integer, cst.Float, cst.List, cst.Tuple, cst.UnaryOperation))
        for n in (data.value, *iter_nodes(data.value))
        if isinstance(n, cst.BaseExpression)
    )
