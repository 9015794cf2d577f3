"""What the TL5xx rules share: the Dataset class a DataLoader with worker processes reads."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from torchlint.engine.context import FileContext
from torchlint.engine.core.callargs import get_arg, int_value
from torchlint.engine.semantic.values import current_where
from torchlint.engine.torch.built_classes import BuiltClass

DATALOADER = "torch.utils.data.DataLoader"


@dataclass(frozen=True)
class WorkerDataset:
    workers: int  # the literal `num_workers`
    dataset: BuiltClass  # the dataset's class

    def place(self, line: int) -> tuple[str, tuple[int, ...]]:
        """`line N` in this file (and N, for `Rule.report`'s `cites`), `file.py:N` in another project file."""
        file = self.dataset.file
        return (f"line {line}", (line,)) if file is None else (f"{file.name}:{line}", ())


def worker_dataset(ctx: FileContext, node: cst.Call) -> WorkerDataset | None:
    """For `DataLoader(SomeDataset(...), num_workers=N)` with a literal N > 0: N and the dataset's class,
    this file's or a project file's (the argument is followed to the call that built it)."""
    if ctx.qualname(node.func) != DATALOADER:
        return None
    workers_arg = get_arg(node, "num_workers", 5)
    workers = int_value(workers_arg.value) if workers_arg is not None else None
    dataset = get_arg(node, "dataset", 0)
    if workers is None or workers <= 0 or dataset is None:
        return None
    built = ctx.values.builder(dataset.value, current_where(ctx))
    if built is None:
        return None
    found = ctx.built_classes.of(built[0])
    return WorkerDataset(workers, found) if found is not None else None
