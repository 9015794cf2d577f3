"""TL503 workers-without-main-guard: DataLoader workers started by code that runs on import"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.core.callargs import get_arg, has_star, int_value
from torchlint.engine.core.walk import iter_nodes
from torchlint.engine.rule import Invalid, Rule
from torchlint.engine.semantic.kinds import LOADER_WRAPPERS
from torchlint.engine.semantic.names import is_main_guard
from torchlint.engine.semantic.values import current_where
from torchlint.findings import Severity

from ._helpers import DATALOADER


class WorkersWithoutMainGuard(Rule):
    code = "TL503"
    analyses = frozenset(
        {
            Analysis.CALL_SITES,
            Analysis.IS_PROGRAM,
            Analysis.LOCAL_FUNCTIONS,
            Analysis.OWN_SUMMARY,
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
        text = self.ctx.text
        notebook = ".ipynb" in self.ctx.path or text.startswith("# %%") or "\n# %%" in text  # jupytext cells
        self.active: bool | None = None if not notebook and "set_start_method" not in text else False
        self.on_import: dict[str, str] = {}

    def visit_For(self, node: cst.For) -> None:
        if self.active is False or self.ctx.under_main_guard or self.ctx.current_class is not None:
            return
        if self.active is None:  # whether the file is a program is asked at its first unguarded loop
            self.active = self.ctx.is_program
            self.on_import = _run_on_import(self.ctx.module, self.ctx.local_functions()) if self.active else {}
            if not self.active:
                return
        functions = self.ctx.functions
        if functions and functions[0].name.value not in self.on_import:
            return
        found = self._loader(node.iter)
        if found is None:
            return
        loader, workers = found
        via = "" if not functions else f" (`{self.on_import[functions[0].name.value]}` runs it)"
        self.report(node, self.message.format(loader=loader, n=workers, via=via))

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


def _run_on_import(module: cst.Module, functions: dict[str, cst.FunctionDef]) -> dict[str, str]:
    """This file's functions that run when it is imported, each with the module-level call that starts
    the chain: called by unguarded module-level code, or by such a function."""
    out: dict[str, str] = {}
    todo: list[tuple[str, str]] = []
    for stmt in module.body:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) or (isinstance(stmt, cst.If) and is_main_guard(stmt.test)):
            continue
        todo += [(name, f"{name}()") for name in _called(stmt, functions)]
    while todo:
        name, root = todo.pop()
        if name in out:
            continue
        out[name] = root
        todo += [(callee, root) for callee in _called(functions[name].body, functions)]
    return out


def _called(node: cst.CSTNode, functions: dict[str, cst.FunctionDef]) -> list[str]:
    return [
        n.func.value
        for n in iter_nodes(node, into_functions=False)
        if isinstance(n, cst.Call) and isinstance(n.func, cst.Name) and n.func.value in functions
    ]
