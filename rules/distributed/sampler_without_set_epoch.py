"""TL403 sampler-without-set-epoch: DistributedSampler(shuffle=True) without set_epoch() in the epoch loop"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.core.callargs import get_arg, is_name
from torchlint.engine.core.walk import iter_nodes
from torchlint.engine.flow.blocks import Loop
from torchlint.engine.rule import SAFE, InsertBefore, Invalid, Rule, fix
from torchlint.engine.semantic.kinds import LOADER_WRAPPERS
from torchlint.engine.semantic.names import dotted
from torchlint.findings import Severity

from ._helpers import DIST_SAMPLER


def _unwrap_iter(expr: cst.BaseExpression) -> cst.BaseExpression:
    while isinstance(expr, cst.Call) and dotted(expr.func) in LOADER_WRAPPERS and expr.args:
        expr = expr.args[0].value
    return expr


def _mentions(expr: cst.BaseExpression, names: set[str]) -> bool:
    return any(dotted(n) in names for n in (expr, *iter_nodes(expr)) if isinstance(n, (cst.Name, cst.Attribute)))


class SamplerWithoutSetEpoch(Rule):
    code = "TL403"
    analyses = frozenset({Analysis.CALL_SITES, Analysis.IS_PROGRAM, Analysis.LOCAL_FUNCTIONS})
    requires = ("DistributedSampler",)
    name = "sampler-without-set-epoch"
    message = (
        "the DistributedSampler of `{loader}` is never told the epoch: every epoch iterates the same "
        "shuffled order; call `{sampler}.set_epoch({epoch})` at the start of the epoch loop"
    )
    conditional_message = (
        "`{call}` runs only under `if {test}`, but the DistributedSampler is built in every run: when the "
        "condition is false every epoch iterates the same shuffled order; call `set_epoch` unconditionally"
    )
    severity = Severity.WARNING
    category = "correctness"
    summary = "DistributedSampler(shuffle=True) without set_epoch() in the epoch loop"
    what = (
        "Flags an epoch loop over a DataLoader whose sampler is a shuffling `DistributedSampler` when the "
        "program never calls `set_epoch`; and a `set_epoch` call made only under a condition "
        "(`if args.distributed:`) when the sampler itself is built unconditionally (the condition does not "
        "mention the sampler or its loader: `if sampler is not None` is a guard, not a gap)."
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
    fix_safety = (
        "Safe: `set_epoch` only changes the shuffling seed of the following iteration. The conditional "
        "`set_epoch` has no fix (the condition may guard more than the call)."
    )
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
        # built and told the epoch under the same condition
        """\
from torch.utils.data import DataLoader, DistributedSampler
sampler = None
if distributed:
    sampler = DistributedSampler(dataset)
loader = DataLoader(dataset, sampler=sampler)
for epoch in range(10):
    if distributed:
        sampler.set_epoch(epoch)
    for x, y in loader:
        step(x, y)
""",
        # a guard on the sampler itself
        """\
from torch.utils.data import DataLoader, DistributedSampler
sampler = DistributedSampler(dataset)
loader = DataLoader(dataset, sampler=sampler)
for epoch in range(10):
    if hasattr(loader.sampler, "set_epoch"):
        loader.sampler.set_epoch(epoch)
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
        # always built, told the epoch only when distributed
        Invalid(
            """\
from torch.utils.data import DataLoader, DistributedSampler
sampler = DistributedSampler(ds, num_replicas=world_size, rank=rank)
loader = DataLoader(ds, sampler=sampler)
for epoch in range(3):
    if args.distributed:
        sampler.set_epoch(epoch)
    for batch in loader:
        step(batch)
""",
            line=5,
        ),
    ]

    def visit_Module(self, node: cst.Module) -> None:
        self.told = self.ctx.file_calls("set_epoch")  # the file calls set_epoch somewhere
        self.samplers: dict[str, cst.FunctionDef | None] = {}  # sampler name -> function it is made in
        self.loaders: dict[str, str | None] = {}  # loader name -> sampler name (None: inline)
        self.always_built: set[str] = set()  # samplers and loaders built outside any condition
        # sampler name (a loader's, for an inline one) -> its set_epoch calls: (call, the innermost `if`, or None: unconditional)
        self.set_epochs: dict[str, list[tuple[cst.Call, cst.If | None]]] = {}
        self.epoch_loops: list[cst.For] = []
        self.reported = False

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value != "set_epoch":
            return
        owner = dotted(func.value)
        if owner is not None and owner.endswith(".sampler"):
            owner = owner[: -len(".sampler")]
        if owner is None or (owner not in self.samplers and owner not in self.loaders):
            return
        sampler = self.loaders.get(owner) or owner
        if sampler in self.samplers and self.samplers[sampler] is not self.ctx.current_function:
            return  # a name of another function: not the sampler built there
        guard = self.ctx.ifs[-1] if self.ctx.under_condition else None
        self.set_epochs.setdefault(sampler, []).append((node, guard))

    def _shuffling_sampler(self, expr: cst.BaseExpression) -> bool:
        if not isinstance(expr, cst.Call) or self.ctx.qualname(expr.func) != DIST_SAMPLER:
            return False
        shuffle = get_arg(expr, "shuffle", 3)
        return shuffle is None or not is_name(shuffle.value, "False")

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1:
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
            else:
                return
        else:
            return
        if self.ctx.under_condition:
            self.always_built.discard(name)
        else:
            self.always_built.add(name)

    def visit_For(self, node: cst.For) -> None:
        if self.told or self.reported:
            return
        if not self.ctx.loops[:-1]:  # an outermost loop: it may be the epoch loop around a helper
            self.epoch_loops.append(node)
        loader = dotted(_unwrap_iter(node.iter))
        if loader not in self.loaders or len(self.ctx.loops) < 2:
            return
        self._report(self.ctx.loops[-2], loader)

    def leave_Module(self, node: cst.Module) -> None:
        self._conditional_set_epoch()
        # the loader loop lives in a helper called from the epoch loop
        if self.told or self.reported or not self.loaders:
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

    def _conditional_set_epoch(self) -> None:
        """Every `set_epoch` of an always-built sampler sits under an `if` that does not test the sampler."""
        for owner, calls in self.set_epochs.items():  # a named sampler, or a loader with an inline one
            if owner not in self.always_built:
                continue
            names = {owner, *(loader for loader, s in self.loaders.items() if s == owner)}
            if any(guard is None or _mentions(guard.test, names) for _, guard in calls):
                continue
            call, guard = calls[0]
            assert guard is not None, "every call is guarded"
            code = self.ctx.module.code_for_node
            self.report(guard, self.conditional_message.format(call=code(call), test=code(guard.test)))

    def _report(self, loop: Loop, loader: str) -> None:
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
