"""TL403 sampler-without-set-epoch: DistributedSampler(shuffle=True) without set_epoch() in the epoch loop"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.callargs import get_arg, is_name
from torchlint.engine.kinds import LOADER_WRAPPERS
from torchlint.engine.names import dotted
from torchlint.engine.rule import SAFE, InsertBefore, Invalid, Rule, fix
from torchlint.engine.walk import iter_nodes
from torchlint.findings import Severity
from torchlint.rules.distributed._helpers import DIST_SAMPLER


def _unwrap_iter(expr: cst.BaseExpression) -> cst.BaseExpression:
    while isinstance(expr, cst.Call) and dotted(expr.func) in LOADER_WRAPPERS and expr.args:
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
    category = "correctness"
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
        if not self.ctx.loops[:-1]:  # an outermost loop: it may be the epoch loop around a helper
            self.epoch_loops.append(node)
        loader = dotted(_unwrap_iter(node.iter))
        if loader not in self.loaders or len(self.ctx.loops) < 2:
            return
        self._report(self.ctx.loops[-2], loader)

    def leave_Module(self, node: cst.Module) -> None:
        # the loader loop lives in a helper called from the epoch loop
        if not self.active or self.reported or not self.loaders:
            return
        helpers = {
            name
            for name, fn in self.ctx.local_functions().items()
            if any(
                isinstance(n, cst.For) and dotted(_unwrap_iter(n.iter)) in self.loaders
                for n in iter_nodes(fn, into_functions=False)
            )
        }
        for loop in self.epoch_loops:
            if any(
                isinstance(n, cst.Call) and isinstance(n.func, cst.Name) and n.func.value in helpers
                for n in iter_nodes(loop.body, into_functions=False)
            ):
                self._report(loop, next(iter(self.loaders)))
                return

    def _report(self, loop, loader: str) -> None:
        self.reported = True
        local = "." not in loader and self.ctx.current_function is not None
        if not local and self.ctx.program_calls("set_epoch"):
            return  # the sampler escapes this function: the program may give it the epoch elsewhere
        sampler = self.loaders[loader]
        if sampler is None or self.samplers.get(sampler) is not self.ctx.current_function:
            sampler = f"{loader}.sampler"
        epoch = loop.target.value if isinstance(loop, cst.For) and isinstance(loop.target, cst.Name) else None
        edit = None
        if epoch and isinstance(loop.body, cst.IndentedBlock) and loop in self.ctx.loops:
            edit = fix(
                f"Insert `{sampler}.set_epoch({epoch})`",
                InsertBefore(loop.body.body[0], f"{sampler}.set_epoch({epoch})"),
                applicability=SAFE,
            )
        self.report(loop, self.message.format(loader=loader, sampler=sampler, epoch=epoch or "epoch"), fix=edit)
