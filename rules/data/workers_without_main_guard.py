"""TL503 workers-without-main-guard: DataLoader workers started by code that runs on import"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.core.callargs import get_arg, has_star, int_value
from torchlint.engine.rule import Invalid, Rule
from torchlint.engine.semantic.kinds import LOADER_WRAPPERS
from torchlint.engine.semantic.values import current_where
from torchlint.findings import Severity

from ._helpers import DATALOADER


class WorkersWithoutMainGuard(Rule):
    code = "TL503"
    analyses = frozenset(
        {
            Analysis.CALL_SITES,
            Analysis.IS_NOTEBOOK,
            Analysis.IS_PROGRAM,
            Analysis.LOCAL_FUNCTIONS,
            Analysis.OWN_SUMMARY,
            Analysis.RUN_ON_IMPORT,
            Analysis.SCOPES,
            Analysis.VALUES,
        }
    )
    requires = ("DataLoader", "num_workers")
    name = "workers-without-main-guard"
    message = (
        "`{loader}` starts {n} worker processes from code that runs when the script is imported{via}: with the "
        "`spawn` start method (the default on macOS and Windows) each worker re-imports the script and fails "
        "with `RuntimeError: An attempt has been made to start a new process before the current process has "
        'finished its bootstrapping phase`; run the entry point under `if __name__ == "__main__":`'
    )
    severity = Severity.WARNING
    category = "correctness"
    summary = "DataLoader with num_workers > 0 iterated by code that runs on import (no __main__ guard)"
    what = (
        "Flags a loop over a DataLoader built with a literal `num_workers > 0` when the loop runs as the script "
        'is imported: at module level outside `if __name__ == "__main__":`, or in a function that module-level '
        "code calls unguarded (`main()` at the bottom of the file). Notebooks and `# %%` cell files, library "
        "modules, and scripts that choose their start method (`set_start_method`) are left alone."
    )
    why = (
        "DataLoader workers are separate processes. With `spawn` (macOS and Windows; also CUDA users on Linux "
        "who choose it) a worker starts a fresh interpreter that imports the main script to find the dataset "
        "class; if importing the script starts training again, the worker tries to start workers of its own and "
        "Python stops it with a RuntimeError. The script runs on Linux (`fork`) and fails for every colleague "
        "on a Mac."
    )
    example = """\
from torch.utils.data import DataLoader

loader = DataLoader(dataset, batch_size=64, num_workers=4)


def main():
    for x, y in loader:
        train_step(x, y)


main()
"""
    fix_example = """\
from torch.utils.data import DataLoader

loader = DataLoader(dataset, batch_size=64, num_workers=4)


def main():
    for x, y in loader:
        train_step(x, y)


if __name__ == "__main__":
    main()
"""
    VALID = [
        """\
from torch.utils.data import DataLoader
def main():
    loader = DataLoader(ds, num_workers=4)
    for batch in loader:
        step(batch)
if __name__ == "__main__":
    main()
""",
        """\
from torch.utils.data import DataLoader
loader = DataLoader(ds, num_workers=0)
for batch in loader:
    step(batch)
""",
        """\
import torch.multiprocessing as mp
from torch.utils.data import DataLoader
mp.set_start_method("fork")
loader = DataLoader(ds, num_workers=2)
for batch in loader:
    step(batch)
""",
        """\
# %%
from torch.utils.data import DataLoader
loader = DataLoader(ds, num_workers=2)
# %%
for batch in loader:
    step(batch)
""",
        """\
from torch.utils.data import DataLoader
def evaluate(ds):
    for batch in DataLoader(ds, num_workers=4):
        step(batch)
""",
    ]
    INVALID = [
        Invalid(
            """\
from torch.utils.data import DataLoader
loader = DataLoader(ds, batch_size=8, num_workers=4)
for epoch in range(3):
    for i, batch in enumerate(loader):
        step(batch)
""",
            line=4,
        ),
        Invalid(
            """\
from torch.utils.data import DataLoader
def train(ds):
    loader = DataLoader(ds, num_workers=2)
    for batch in loader:
        step(batch)
def main():
    train(load())
main()
""",
            line=4,
        ),
    ]

    def visit_Module(self, node: cst.Module) -> None:
        self.active: bool | None = None

    def visit_For(self, node: cst.For) -> None:
        if self.active is False or self.ctx.under_main_guard or self.ctx.current_class is not None:
            return
        if self.active is None:  # asked at the file's first unguarded loop
            self.active = not self._chooses_how_it_runs() and self.ctx.is_program
            if not self.active:
                return
        functions = self.ctx.functions
        if functions and functions[0].name.value not in self.ctx.run_on_import:
            return
        found = self._loader(node.iter)
        if found is None:
            return
        loader, workers = found
        via = "" if not functions else f" (`{self.ctx.run_on_import[functions[0].name.value]}` runs it)"
        self.report(node, self.message.format(loader=loader, n=workers, via=via))

    def _chooses_how_it_runs(self) -> bool:
        """A notebook (run cell by cell) or a script that sets the start method itself."""
        if self.ctx.is_notebook:
            return True
        own = self.ctx.own_summary
        return own is not None and "set_start_method" in own.called

    def _loader(self, expr: cst.BaseExpression) -> tuple[str, int] | None:
        """The loader a loop iterates and its literal worker count, when a DataLoader call with workers built it."""
        while isinstance(expr, cst.Call) and _callee(expr) in LOADER_WRAPPERS and expr.args:
            expr = expr.args[0].value
        call = expr if isinstance(expr, cst.Call) else None
        if call is None:
            built = self.ctx.values.builder(expr, current_where(self.ctx))
            call = built[0] if built is not None else None
        if call is None or self.ctx.qualname(call.func) != DATALOADER or has_star(call):
            return None
        workers = get_arg(call, "num_workers", 5)
        n = int_value(workers.value) if workers is not None else None
        if n is None or n <= 0:
            return None
        return self.ctx.module.code_for_node(expr), n


def _callee(call: cst.Call) -> str | None:
    func = call.func
    if isinstance(func, cst.Name):
        return func.value
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
        return f"{func.value.value}.{func.attr.value}"
    return None
