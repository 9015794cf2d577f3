"""The file's functions that run when it is imported (or run as a script without a `__main__` guard).

Module-level code outside `if __name__ == "__main__":` runs on import: a worker process started with `spawn`
re-imports the main script, so a DataLoader with workers iterated by such code starts workers again. What runs
on import: the functions this file's unguarded module-level statements call by name, and those they call in
turn (this file's functions only, by bare name, as `FileContext.local_functions` lists them).
"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.walk import iter_nodes
from torchlint.engine.semantic.names import is_main_guard


def run_on_import(module: cst.Module, functions: dict[str, cst.FunctionDef]) -> dict[str, str]:
    """This file's functions that run when it is imported, each with the module-level call that starts
    the chain (`main()`): called by unguarded module-level code, or by such a function."""
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
