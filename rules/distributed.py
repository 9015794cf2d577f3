"""Distributed-training rules (TL4xx): DDP wrapping, process groups, samplers, wrapped checkpoints."""

from __future__ import annotations

import libcst as cst

from torchlint.engine.callargs import get_arg, is_name, string_value
from torchlint.engine.device_moves import device_moves, move_call
from torchlint.engine.kinds import Kind
from torchlint.engine.names import dotted
from torchlint.engine.rule import InsertBefore, Invalid, RemoveStatement, Replace, Rule, fix
from torchlint.engine.walk import block_statements, iter_nodes, iter_statements, small_statements
from torchlint.findings import Severity

DDP = "torch.nn.parallel.DistributedDataParallel"
DIST_SAMPLER = "torch.utils.data.DistributedSampler"
_LAUNCHERS = (
    "accelerate",
    "lightning",
    "pytorch_lightning",
    "deepspeed",
    "horovod",
    "ignite",
    "colossalai",
    "fairscale",
)


def _statement_of(body, node: cst.CSTNode):
    """(index, statement) of the statement in `body` (flattened, source order) that contains `node`."""
    for i, stmt in enumerate(iter_statements(body)):
        for small in small_statements(stmt):
            if small is node or any(n is node for n in iter_nodes(small, into_functions=False)):
                return i, stmt
    return None


def _body(ctx):
    fn = ctx.current_function
    if fn is None:
        return ctx.module.body
    return block_statements(fn.body)


class DdpBeforeDeviceMove(Rule):
    code = "TL401"
    requires = ("DistributedDataParallel",)
    name = "ddp-before-device-move"
    message = (
        "`{model}` is wrapped in DistributedDataParallel before it is moved to its device (line order): DDP "
        "records parameter devices and broadcasts buffers at construction; move the model first, then wrap"
    )
    severity = Severity.ERROR
    summary = "DistributedDataParallel(model) before model.to(device)"
    what = "Flags `DistributedDataParallel(model)` when `model` (or the wrapper) is moved with `.to(...)`/`.cuda()` only afterwards."
    why = (
        "DDP inspects the module's parameters when it is constructed: it picks the device for its "
        "gradient buckets and broadcasts rank 0's parameters from where they are. Wrapping a CPU model and "
        "moving it afterwards either raises (`device_ids` given for a CPU module) or leaves DDP's "
        "communication buffers on the wrong device."
    )
    example = """\
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(Net())
model.to(rank)
"""
    fix_example = """\
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

net = Net()
net.to(rank)
model = DDP(net)
"""
    fix_safety = (
        "Offered when the later move is its own statement on the wrapped name in the same block and its "
        "device expression is already defined before the wrap: the statement is moved above the wrap."
    )
    VALID = [
        """\
from torch.nn.parallel import DistributedDataParallel as DDP
model = Net().to(rank)
model = DDP(model, device_ids=[rank])
""",
        """\
import torch
model = Net()
model.cuda(rank)
ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank])
""",
        # CPU DDP (gloo): never moved
        """\
from torch.nn.parallel import DistributedDataParallel as DDP
model = DDP(Net())
""",
    ]
    INVALID = [
        Invalid(
            """\
from torch.nn.parallel import DistributedDataParallel as DDP
def main(rank):
    model = Net()
    ddp_model = DDP(model, device_ids=[rank])
    model.to(rank)
""",
            line=4,
            fixed="""\
from torch.nn.parallel import DistributedDataParallel as DDP
def main(rank):
    model = Net()
    model.to(rank)
    ddp_model = DDP(model, device_ids=[rank])
""",
        ),
        Invalid(
            """\
import torch.nn as nn
model = nn.parallel.DistributedDataParallel(model).cuda()
""",
            line=2,
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.qualname(node.func) != DDP or not node.args:
            return
        wrapped = dotted(node.args[0].value)
        body = _body(self.ctx)
        found = _statement_of(body, node)
        if found is None:
            return
        index, stmt = found
        order = {id(s): i for i, s in enumerate(iter_statements(body))}
        names = {wrapped} if wrapped else set()
        for small in small_statements(stmt):
            if isinstance(small, cst.Assign) and small.value is node:
                names.update(dotted(t.target) for t in small.targets)
        names.discard(None)
        moves = device_moves(self.ctx)
        chained = any(
            (found := move_call(n, self.ctx.imports)) is not None and found[0] is node
            for small in small_statements(stmt)
            for n in iter_nodes(small, into_functions=False)
        )
        if chained:  # DDP(model).cuda()
            later, move = True, None
        else:
            own = [m for n in names for m in moves.of(n) if id(m.stmt) in order]
            if any(order[id(m.stmt)] < index for m in own if m.target == wrapped):
                return
            after = sorted((m for m in own if order[id(m.stmt)] > index), key=lambda m: order[id(m.stmt)])
            later = bool(after)
            move = after[0] if after else None
        if later:
            self.report(
                node, self.message.format(model=wrapped or "the model"), fix=self._fix(move, wrapped, stmt, body, index)
            )

    def _fix(self, move, wrapped, stmt, body, index):
        if move is None or move.target != wrapped or not isinstance(move.stmt, cst.SimpleStatementLine):
            return None
        if len(move.stmt.body) != 1 or not any(s is move.stmt for s in body) or not any(s is stmt for s in body):
            return None  # only statements of the same block can be swapped
        if move.device is not None:
            needed = {n.value for n in (move.device, *iter_nodes(move.device)) if isinstance(n, cst.Name)}
            between = list(iter_statements(body))[index:]
            for s in between[: between.index(move.stmt)]:
                for small in small_statements(s):
                    if isinstance(small, cst.Assign) and any(dotted(t.target) in needed for t in small.targets):
                        return None
        code = self.ctx.module.code_for_node(move.stmt.body[0])
        return fix("Move the model before wrapping it", RemoveStatement(move.stmt), InsertBefore(stmt, code))


def _launcher_initialises(ctx) -> bool:
    """The program initialises the process group itself, or hands that to a launcher library."""
    text = ctx.text
    if any(
        k in text for k in ("init_process_group", "is_initialized", "init_distributed", "initialize_model_parallel")
    ):
        return True
    if any(ctx.imports.imports_module(m) for m in _LAUNCHERS):
        return True
    # a helper imported from project code: `from utils import setup_ddp; setup_ddp(rank)`
    for local, q in ctx.imports.table.items():
        if not q.startswith("torch") and any(k in local.lower() for k in ("dist", "setup", "ddp", "init")):
            return True
    return False


class DdpWithoutProcessGroup(Rule):
    code = "TL402"
    requires = ("Distributed",)
    name = "ddp-without-process-group"
    message = (
        "`{what}` needs an initialised process group, but this program never calls "
        "`torch.distributed.init_process_group(...)`: it raises `Default process group has not been initialized`"
    )
    severity = Severity.ERROR
    summary = "DDP / DistributedSampler without init_process_group"
    what = (
        "Flags `DistributedDataParallel(...)` and `DistributedSampler(...)` in a file that never calls "
        "`init_process_group` and shows no launcher library (Accelerate, Lightning, DeepSpeed, ...) or "
        "imported setup helper that would."
    )
    why = (
        "Both query the default process group at construction (`DistributedSampler` for the world size and "
        "rank when they are not given). `torchrun` only sets environment variables; the script must still "
        "call `init_process_group`."
    )
    example = """\
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(Net().cuda())
"""
    VALID = [
        """\
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
dist.init_process_group("nccl")
model = DDP(Net().cuda())
""",
        """\
from torch.utils.data import DistributedSampler
sampler = DistributedSampler(ds, num_replicas=world_size, rank=rank)
""",
        """\
from my_project.dist_utils import setup
from torch.nn.parallel import DistributedDataParallel as DDP
setup()
model = DDP(net)
""",
    ]
    INVALID = [
        Invalid(
            "from torch.utils.data import DistributedSampler, DataLoader\n"
            "loader = DataLoader(ds, sampler=DistributedSampler(ds))\n",
            line=2,
        ),
    ]

    def visit_Module(self, node: cst.Module) -> None:
        self.done = "Distributed" not in self.ctx.text or _launcher_initialises(self.ctx)

    def visit_Call(self, node: cst.Call) -> None:
        if self.done:
            return
        q = self.ctx.qualname(node.func)
        if q == DIST_SAMPLER:
            if get_arg(node, "num_replicas", 1) is not None and get_arg(node, "rank", 2) is not None:
                return
            what = "DistributedSampler"
        elif q == DDP:
            what = "DistributedDataParallel"
        else:
            return
        self.done = True
        self.report(node, self.message.format(what=what))


def _unwrap_iter(expr: cst.BaseExpression) -> cst.BaseExpression:
    while isinstance(expr, cst.Call) and dotted(expr.func) in ("enumerate", "tqdm", "tqdm.tqdm", "iter") and expr.args:
        expr = expr.args[0].value
    return expr


class SamplerWithoutSetEpoch(Rule):
    code = "TL403"
    requires = ("DistributedSampler",)
    name = "sampler-without-set-epoch"
    message = (
        "the DistributedSampler of `{loader}` is never told the epoch: every epoch iterates the same "
        "shuffled order; call `{sampler}.set_epoch({epoch})` at the start of the epoch loop"
    )
    severity = Severity.WARNING
    summary = "DistributedSampler(shuffle=True) without set_epoch() in the epoch loop"
    what = (
        "Flags an epoch loop over a DataLoader whose sampler is a shuffling `DistributedSampler` when the "
        "program never calls `set_epoch`."
    )
    why = (
        "`DistributedSampler` seeds its shuffle with `seed + epoch`. Without `set_epoch(epoch)` the epoch "
        "stays 0, so each epoch sees exactly the same permutation — the data is effectively not reshuffled, "
        "which hurts convergence and generalisation, silently."
    )
    example = """\
from torch.utils.data import DataLoader, DistributedSampler

sampler = DistributedSampler(dataset)
loader = DataLoader(dataset, batch_size=64, sampler=sampler)
for epoch in range(10):
    for x, y in loader:
        train_step(x, y)
"""
    fix_example = """\
from torch.utils.data import DataLoader, DistributedSampler

sampler = DistributedSampler(dataset)
loader = DataLoader(dataset, batch_size=64, sampler=sampler)
for epoch in range(10):
    sampler.set_epoch(epoch)
    for x, y in loader:
        train_step(x, y)
"""
    fix_safety = "Safe: `set_epoch` only changes the shuffling seed of the following iteration."
    VALID = [
        """\
from torch.utils.data import DataLoader, DistributedSampler
sampler = DistributedSampler(dataset)
loader = DataLoader(dataset, sampler=sampler)
for epoch in range(10):
    sampler.set_epoch(epoch)
    for x, y in loader:
        step(x, y)
""",
        """\
from torch.utils.data import DataLoader, DistributedSampler
loader = DataLoader(dataset, sampler=DistributedSampler(dataset, shuffle=False))
for epoch in range(10):
    for x, y in loader:
        step(x, y)
""",
        # a single pass: no epoch loop, the order does not matter
        """\
from torch.utils.data import DataLoader, DistributedSampler
loader = DataLoader(dataset, sampler=DistributedSampler(dataset))
for x, y in loader:
    evaluate(x, y)
""",
    ]
    INVALID = [
        Invalid(
            """\
import torch
def train(dataset, epochs):
    train_loader = torch.utils.data.DataLoader(dataset, sampler=torch.utils.data.DistributedSampler(dataset))
    for epoch in range(epochs):
        for step, (x, y) in enumerate(train_loader):
            step_fn(x, y)
""",
            line=4,
            fixed="""\
import torch
def train(dataset, epochs):
    train_loader = torch.utils.data.DataLoader(dataset, sampler=torch.utils.data.DistributedSampler(dataset))
    for epoch in range(epochs):
        train_loader.sampler.set_epoch(epoch)
        for step, (x, y) in enumerate(train_loader):
            step_fn(x, y)
""",
        ),
        Invalid(
            """\
from torch.utils.data import DataLoader, DistributedSampler
sampler = DistributedSampler(ds, shuffle=True)
loader = DataLoader(ds, sampler=sampler)
def train_one_epoch(loader):
    for batch in loader:
        step(batch)
for epoch in range(3):
    train_one_epoch(loader)
""",
            line=7,
        ),
    ]

    def visit_Module(self, node: cst.Module) -> None:
        self.active = "DistributedSampler" in self.ctx.text and "set_epoch" not in self.ctx.text
        self.samplers: dict[str, cst.FunctionDef | None] = {}  # sampler name -> function it is made in
        self.loaders: dict[str, str | None] = {}  # loader name -> sampler name (None: inline)
        self.epoch_loops: list[cst.For] = []
        self.reported = False

    def _shuffling_sampler(self, expr: cst.BaseExpression) -> bool:
        if not isinstance(expr, cst.Call) or self.ctx.qualname(expr.func) != DIST_SAMPLER:
            return False
        shuffle = get_arg(expr, "shuffle", 3)
        return shuffle is None or not is_name(shuffle.value, "False")

    def visit_Assign(self, node: cst.Assign) -> None:
        if not self.active or len(node.targets) != 1:
            return
        name = dotted(node.targets[0].target)
        if not name:
            return
        value = node.value
        if self._shuffling_sampler(value):
            self.samplers[name] = self.ctx.current_function
        elif isinstance(value, cst.Call) and (self.ctx.qualname(value.func) or "").endswith("DataLoader"):
            arg = get_arg(value, "sampler", 3)
            if arg is None:
                return
            if self._shuffling_sampler(arg.value):
                self.loaders[name] = None
            elif dotted(arg.value) in self.samplers:
                self.loaders[name] = dotted(arg.value)

    def visit_For(self, node: cst.For) -> None:
        if not self.active or self.reported:
            return
        if isinstance(node.target, cst.Name) and "epoch" in node.target.value.lower():
            self.epoch_loops.append(node)
        loader = dotted(_unwrap_iter(node.iter))
        if loader not in self.loaders or len(self.ctx.loops) < 2:
            return
        self._report(self.ctx.loops[-2], loader)

    def leave_Module(self, node: cst.Module) -> None:
        # the loader loop lives in a helper called from the epoch loop
        if self.active and not self.reported and self.loaders and self.epoch_loops:
            self._report(self.epoch_loops[0], next(iter(self.loaders)))

    def _report(self, loop, loader: str) -> None:
        self.reported = True
        sampler = self.loaders[loader]
        if sampler is None or self.samplers.get(sampler) is not self.ctx.current_function:
            sampler = f"{loader}.sampler"
        epoch = loop.target.value if isinstance(loop, cst.For) and isinstance(loop.target, cst.Name) else None
        edit = None
        if epoch and isinstance(loop.body, cst.IndentedBlock) and loop in self.ctx.loops:
            edit = fix(
                f"Insert `{sampler}.set_epoch({epoch})`",
                InsertBefore(loop.body.body[0], f"{sampler}.set_epoch({epoch})"),
            )
        self.report(loop, self.message.format(loader=loader, sampler=sampler, epoch=epoch or "epoch"), fix=edit)


class DdpFindUnusedParameters(Rule):
    code = "TL405"
    requires = ("find_unused_parameters",)
    name = "ddp-find-unused-parameters"
    message = (
        "`find_unused_parameters=True` makes DDP traverse the autograd graph after every forward pass; "
        "keep it only if some parameters really get no gradient (otherwise drop it, or use `static_graph=True`)"
    )
    severity = Severity.INFO
    summary = "DDP find_unused_parameters=True costs a graph traversal per step"
    what = (
        "Flags `find_unused_parameters=True` given to `DistributedDataParallel`, Accelerate's "
        "`DistributedDataParallelKwargs` or Lightning's `DDPStrategy` (and the `ddp_find_unused_parameters_true` strategy)."
    )
    why = (
        "With the flag, DDP walks the autograd graph from the outputs after each forward pass to find "
        "parameters that will not receive gradients, and cannot overlap communication as well. It is often "
        "copied from examples 'to make an error go away' and then costs throughput for the whole run."
    )
    example = """\
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(model, device_ids=[rank], find_unused_parameters=True)
"""
    VALID = [
        "from torch.nn.parallel import DistributedDataParallel as DDP\nmodel = DDP(model, device_ids=[rank])\n",
        "from torch.nn.parallel import DistributedDataParallel as DDP\nmodel = DDP(model, find_unused_parameters=False)\n",
        "find_unused_parameters = True\n",
    ]
    INVALID = [
        Invalid(
            "from accelerate import DistributedDataParallelKwargs\n"
            "kwargs = DistributedDataParallelKwargs(find_unused_parameters=True)\n",
            line=2,
        ),
        Invalid('import lightning as L\ntrainer = L.Trainer(strategy="ddp_find_unused_parameters_true")\n', line=2),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        q = self.ctx.qualname(node.func) or ""
        last = q.rpartition(".")[2]
        if q == DDP or last in ("DistributedDataParallelKwargs", "DDPStrategy"):
            arg = get_arg(node, "find_unused_parameters")
            if arg is not None and is_name(arg.value, "True"):
                self.report(arg)
        elif last == "Trainer":
            arg = get_arg(node, "strategy")
            if arg is not None and string_value(arg.value) == "ddp_find_unused_parameters_true":
                self.report(arg)


_DDP_NAMES = ("ddp", "dp_model", "parallel")


class WrappedStateDictSaved(Rule):
    code = "TL407"
    requires = ("state_dict",)
    name = "wrapped-state-dict-saved"
    message = (
        "`{model}` is wrapped in (Distributed)DataParallel: its `state_dict()` keys all start with `module.`, "
        "so the checkpoint does not load into the bare model; save `{model}.module.state_dict()`"
    )
    severity = Severity.WARNING
    summary = "state_dict() of a DataParallel/DDP wrapper is saved"
    what = "Flags `state_dict()` of a `DataParallel`/`DistributedDataParallel` wrapper in a program that saves checkpoints."
    why = (
        "The wrapper registers the real model as its submodule `module`, so every key gains a `module.` "
        "prefix. Loading that checkpoint into an unwrapped model (for inference, or a run with a different "
        "number of GPUs) fails with hundreds of missing and unexpected keys."
    )
    example = """\
import torch

model = torch.nn.parallel.DistributedDataParallel(net, device_ids=[rank])
torch.save(model.state_dict(), "checkpoint.pt")
"""
    fix_example = """\
import torch

model = torch.nn.parallel.DistributedDataParallel(net, device_ids=[rank])
torch.save(model.module.state_dict(), "checkpoint.pt")
"""
    fix_safety = (
        "Safe for the checkpoint's consumers that load into the bare model; code that loads the file back "
        "into a wrapped model must then load into `model.module`."
    )
    VALID = [
        """\
import torch
model = torch.nn.parallel.DistributedDataParallel(net, device_ids=[rank])
torch.save(model.module.state_dict(), "ckpt.pt")
""",
        """\
import torch
model = Net()
torch.save({"model": model.state_dict()}, "ckpt.pt")
""",
    ]
    INVALID = [
        Invalid(
            """\
import torch
from torch import nn
model = nn.DataParallel(Net())
torch.save({"epoch": 3, "model": model.state_dict()}, "ckpt.pt")
""",
            line=4,
            fixed="""\
import torch
from torch import nn
model = nn.DataParallel(Net())
torch.save({"epoch": 3, "model": model.module.state_dict()}, "ckpt.pt")
""",
        ),
        Invalid(
            "import torch\ndef save(ddp_model, path):\n    torch.save(ddp_model.state_dict(), path)\n",
            line=3,
        ),
    ]

    def visit_Module(self, node: cst.Module) -> None:
        self.active = "save" in self.ctx.text

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not self.active or not isinstance(func, cst.Attribute) or func.attr.value != "state_dict":
            return
        recv = func.value
        name = dotted(recv)
        if not name:
            return
        wrapped = bool(self.ctx.kind(recv) & Kind.WRAPPED) or any(k in name.split(".")[-1].lower() for k in _DDP_NAMES)
        if wrapped:
            self.report(
                node,
                self.message.format(model=name),
                fix=fix(f"Save `{name}.module.state_dict()`", Replace(recv, f"{name}.module")),
            )
