"""TL502 dataloader-reiterated-for-length: `len(list(loader))` / `sum(1 for _ in loader)`"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.rule import UNSAFE, Invalid, Replace, Rule, fix
from torchlint.engine.semantic.kinds import Kind
from torchlint.findings import Severity

_MATERIALIZE = frozenset({"list", "tuple"})


class DataloaderReiteratedForLength(Rule):
    code = "TL502"
    analyses = frozenset({Analysis.CALL_SITES, Analysis.KINDS, Analysis.OWN_SUMMARY, Analysis.SCOPES})
    requires = ("len(", "sum(")
    name = "dataloader-reiterated-for-length"
    message = "`{expr}` loads every batch of the DataLoader to count them; `len({loader})` gives the count"
    severity = Severity.WARNING
    category = "performance"
    summary = "`len(list(loader))` / `sum(1 for _ in loader)` on a DataLoader"
    what = (
        "Flags counting a DataLoader's batches by iterating it — `len(list(loader))`, `len(tuple(loader))`, "
        "`len([b for b in loader])`, `sum(1 for _ in loader)` — where `loader` is proven a DataLoader (built "
        "by `DataLoader(...)` or a library call known to return one) and the builtins are not rebound."
    )
    why = (
        "Iterating a DataLoader runs the whole data pipeline — reading files, decoding, augmenting, collating, "
        "starting workers — for every batch; `list(loader)` also holds the whole epoch in memory. "
        "`len(loader)` is computed from the sampler and `batch_size` without loading anything, and respects "
        "`drop_last` and a custom `batch_sampler`."
    )
    example = """\
from torch.utils.data import DataLoader

loader = DataLoader(dataset, batch_size=64)
steps_per_epoch = len(list(loader))
"""
    fix_example = """\
from torch.utils.data import DataLoader

loader = DataLoader(dataset, batch_size=64)
steps_per_epoch = len(loader)
"""
    fix_safety = (
        "Unsafe: for a map-style dataset `len(loader)` is exactly the number of batches an epoch yields, but "
        "for an `IterableDataset` it raises `TypeError` (no `__len__`) or is an estimate from the dataset's "
        "`__len__` that multi-process loading may not match, and the DataLoader's dataset is rarely in sight."
    )
    VALID = [
        "from torch.utils.data import DataLoader\nloader = DataLoader(ds)\nn = len(loader)\n",
        # not proven a DataLoader
        "n = len(list(batches))\n",
        # the list is kept and used: counting is a by-product
        "from torch.utils.data import DataLoader\nloader = DataLoader(ds)\ncached = list(loader)\nn = len(cached)\n",
        # counting something else than batches
        "from torch.utils.data import DataLoader\nloader = DataLoader(ds)\nn = sum(len(y) for _, y in loader)\n",
        "from torch.utils.data import DataLoader\nloader = DataLoader(ds)\nn = len([b for b in loader if b])\n",
        # a rebound builtin
        "from torch.utils.data import DataLoader\nlist = make_list\nloader = DataLoader(ds)\nn = len(list(loader))\n",
    ]
    INVALID = [
        Invalid(
            "from torch.utils.data import DataLoader\nloader = DataLoader(ds, batch_size=8)\nn = len(list(loader))\n",
            line=3,
            fixed="from torch.utils.data import DataLoader\nloader = DataLoader(ds, batch_size=8)\nn = len(loader)\n",
        ),
        Invalid(
            "import torch\ndl = torch.utils.data.DataLoader(ds)\ntotal = sum(1 for _ in dl)\n",
            line=3,
            fixed="import torch\ndl = torch.utils.data.DataLoader(ds)\ntotal = len(dl)\n",
        ),
        Invalid(
            """\
from torch.utils.data import DataLoader
class Trainer:
    def __init__(self, ds):
        self.loader = DataLoader(ds, drop_last=True)
        self.steps = len([batch for batch in self.loader])
""",
            line=5,
            fixed="""\
from torch.utils.data import DataLoader
class Trainer:
    def __init__(self, ds):
        self.loader = DataLoader(ds, drop_last=True)
        self.steps = len(self.loader)
""",
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        # the cheap tests first (the call's shape): `builtin` and `kind` build the scopes they ask
        if not (isinstance(node.func, cst.Name) and node.func.value in ("len", "sum")):
            return
        if len(node.args) != 1 or node.args[0].keyword or node.args[0].star:
            return
        arg = node.args[0].value
        if not (_materializes(arg) if node.func.value == "len" else _counts(arg)):
            return
        builtin = self.ctx.builtin(node.func)
        if builtin not in ("len", "sum"):
            return
        loader = self._materialized(arg) if builtin == "len" else self._counted(arg)
        if loader is None or not self.ctx.kind(loader) & Kind.DATALOADER:
            return
        code = self.ctx.module.code_for_node
        self.report(
            node,
            self.message.format(expr=code(node), loader=code(loader)),
            fix=fix(
                f"Use `len({code(loader)})`",
                Replace(node, f"len({code(loader)})"),
                applicability=UNSAFE,
                risk="raises for an IterableDataset",
            ),
        )

    def _materialized(self, arg: cst.BaseExpression) -> cst.BaseExpression | None:
        """`list(x)` / `tuple(x)` / `[v for v in x]`: the `x` whose every element is kept."""
        if isinstance(arg, cst.Call) and self.ctx.builtin(arg.func) in _MATERIALIZE and len(arg.args) == 1:
            only = arg.args[0]
            return only.value if only.keyword is None and not only.star else None
        if isinstance(arg, cst.ListComp):
            return _single_loop(arg)
        return None

    def _counted(self, arg: cst.BaseExpression) -> cst.BaseExpression | None:
        """`(1 for _ in x)`: the `x` counted."""
        if isinstance(arg, cst.GeneratorExp) and isinstance(arg.elt, cst.Integer) and arg.elt.value == "1":
            return _single_loop(arg)
        return None


def _materializes(arg: cst.BaseExpression) -> bool:
    """The shape `_materialized` reads: `list(x)` / `tuple(x)` (by name) or a comprehension of one loop."""
    if isinstance(arg, cst.Call):
        return isinstance(arg.func, cst.Name) and arg.func.value in _MATERIALIZE and len(arg.args) == 1
    return isinstance(arg, cst.ListComp) and _single_loop(arg) is not None


def _counts(arg: cst.BaseExpression) -> bool:
    """The shape `_counted` reads: `(1 for _ in x)`."""
    return (
        isinstance(arg, cst.GeneratorExp)
        and isinstance(arg.elt, cst.Integer)
        and arg.elt.value == "1"
        and _single_loop(arg) is not None
    )


def _single_loop(comp: cst.ListComp | cst.GeneratorExp) -> cst.BaseExpression | None:
    """The iterable of a comprehension with one `for` and no `if`, else None."""
    clause = comp.for_in
    if clause.ifs or clause.inner_for_in is not None or clause.asynchronous is not None:
        return None
    return clause.iter
