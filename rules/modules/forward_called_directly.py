"""TL203 forward-called-directly: model.forward(x) instead of model(x)"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.rule import SAFE, Invalid, Replace, Rule, fix
from torchlint.engine.semantic.kinds import Kind
from torchlint.findings import Severity


class ForwardCalledDirectly(Rule):
    code = "TL203"
    analyses = frozenset({Analysis.CALL_SITES, Analysis.KINDS, Analysis.OWN_SUMMARY, Analysis.SCOPES})
    requires = ("forward",)
    name = "forward-called-directly"
    message = "`{recv}.forward(...)` skips {what}; call `{recv}(...)`"
    severity = Severity.WARNING
    category = "correctness"
    opt_in = (
        "Measured on 25 public repositories it was not tuned on (bench/realworld, unseen at 2026-12-03 and "
        "2026-12-04), 0 of its 26 findings were right (25 debatable, 1 wrong since fixed): all were modules "
        "with no hooks and no wrapper, where `m.forward(x)` behaves exactly like `m(x)` (the "
        "information-level finding). Select it to keep `m(x)` as the house style, or where hooks, DDP, FSDP "
        "or `torch.compile` are added later."
    )
    summary = "model.forward(x) instead of model(x)"
    what = (
        "Flags `m.forward(...)` where `m` is an `nn.Module` instance (not `super().forward(...)`). A warning "
        "when the program registers hooks on `m` (`m.register_forward_hook(...)`, `register_forward_pre_hook`, "
        "`register_full_backward_hook`, ..., on every module of a `.modules()` loop, or globally) or wraps it "
        "in something that works through `__call__` (DDP, FSDP, `fully_shard`, `torch.compile`, Accelerate's "
        "`prepare`); information otherwise, as nothing is skipped yet. `ddp.forward(...)` on a DDP / "
        "DataParallel object itself skips only hooks on it: its own `forward` does the syncing."
    )
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
            fixed="""\
from torch import nn
class Wrapper(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(4, 4)
    def forward(self, x):
        return self.encoder(x)
""",
        ),
    ]

    def visit_Module(self, node: cst.Module) -> None:
        self.hooked: set[str] = set()  # receivers (as code) of hook registrations
        self.wrapped: set[str] = set()  # modules (as code) handed to a wrapper that works through `__call__`
        self.all_hooked = False  # a global hook, or hooks on every module of a `.modules()` loop
        self.calls: list[tuple[cst.Call, cst.BaseExpression, cst.CSTNode | None, Kind]] = []

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        self._note_hooks_and_wrappers(node)
        if not isinstance(func, cst.Attribute) or func.attr.value != "forward":
            return
        recv = func.value
        if isinstance(recv, cst.Call) or (isinstance(recv, cst.Name) and recv.value == "self"):
            return  # super().forward(...), self.forward(...)
        if self.ctx.qualname(recv) is not None or (
            isinstance(recv, cst.Name) and recv.value in self.ctx.semantics.classes.by_name
        ):
            return  # nn.Linear.forward(self, x): an explicit base-class call
        kind = self.ctx.kind(recv)  # here, where the receiver's name resolves
        if not kind & Kind.MODEL:
            return  # e.g. a compiled extension object with its own `forward`
        self.calls.append((node, recv, self.ctx.top_statement, kind))

    def leave_Module(self, node: cst.Module) -> None:
        """Report once every hook and wrapper of the file is known (they often come after the call)."""
        current = self.ctx.top_statement
        for call, recv, top, kind in self.calls:
            text = self.ctx.module.code_for_node(recv)
            # a DDP / DataParallel object: its own `forward` does its work (`_pre_forward`, scatter), so only
            # hooks on it are skipped, and a wrapper's argument of the same name (`model = DDP(model)`) is
            # another object
            wrapper = bool(kind & Kind.WRAPPED)
            hooked = self.all_hooked or text in self.hooked or (not wrapper and text in self.wrapped)
            what = "its hooks and wrappers" if hooked else "`__call__` (no hooks or wrappers here yet)"
            self.ctx.top_statement = top
            self.report(
                call,
                self.message.format(recv=text, what=what),
                fix=fix(f"Call `{text}(...)`", Replace(call.func, recv), applicability=SAFE),
                severity=Severity.WARNING if hooked else Severity.INFO,
            )
        self.ctx.top_statement = current

    def _note_hooks_and_wrappers(self, call: cst.Call) -> None:
        func = call.func
        q = self.ctx.qualname(func)
        if q in _GLOBAL_HOOKS:
            self.all_hooked = True
        elif q in _WRAPPERS or (
            isinstance(func, cst.Attribute)
            and func.attr.value == "prepare"
            and self.ctx.kind(func.value) & Kind.ACCELERATOR
        ):
            self.wrapped.update(self.ctx.module.code_for_node(a.value) for a in call.args if a.keyword is None)
        elif isinstance(func, cst.Attribute) and func.attr.value in _HOOKS:
            if self._iterates_modules(func.value):
                self.all_hooked = True
            else:
                self.hooked.add(self.ctx.module.code_for_node(func.value))

    def _iterates_modules(self, expr: cst.BaseExpression) -> bool:
        """`m` is the target of an enclosing `for m in model.modules()` (or `named_modules`, `children`)."""
        if not isinstance(expr, cst.Name):
            return False
        for loop in self.ctx.loops:
            if not isinstance(loop, cst.For):
                continue
            it = loop.iter
            if (
                isinstance(it, cst.Call)
                and isinstance(it.func, cst.Attribute)
                and it.func.attr.value in _MODULE_ITERATORS
                and expr.value in {n.value for n in _names(loop.target)}
            ):
                return True
        return False


_HOOKS = frozenset(
    {
        "register_forward_hook",
        "register_forward_pre_hook",
        "register_full_backward_hook",
        "register_full_backward_pre_hook",
        "register_backward_hook",
    }
)
_GLOBAL_HOOKS = frozenset(
    f"torch.nn.modules.module.register_module_{kind}"
    for kind in ("forward_hook", "forward_pre_hook", "full_backward_hook", "full_backward_pre_hook")
)
# Wrappers that do their work around `__call__` of the module they are given.
_WRAPPERS = frozenset(
    {
        "torch.nn.parallel.DistributedDataParallel",
        "torch.distributed.fsdp.FullyShardedDataParallel",
        "torch.distributed.fsdp.fully_shard",
        "torch.distributed._composable.fsdp.fully_shard",
        "torch.compile",
    }
)
_MODULE_ITERATORS = frozenset({"modules", "named_modules", "children", "named_children"})


def _names(target: cst.BaseExpression) -> Iterator[cst.Name]:
    if isinstance(target, cst.Name):
        yield target
    elif isinstance(target, (cst.Tuple, cst.List)):
        for el in target.elements:
            yield from _names(el.value)
