"""Statements after which the default process group is set up, for `DistributedDataParallel(...)` and
`DistributedSampler(...)`, which query it when built.

A statement sets it up when it calls `init_process_group(...)` (or another PROCESS_GROUP_INIT call), or a project
function that does anywhere in its body, directly or through its own helpers: `device =
init_distributed_device(args)` whose helper calls `torch.distributed.init_process_group`, in another file. A
set-up under a branch counts, as TL402 judges a program: the wrapper after it is typically under the same
`if args.distributed:`. calling_context.py carries the fact from the statements before a point to the
functions it calls (`prepare_distributed()` reached only after the set-up).
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from torchlint.engine.core.walk import block_statements, iter_nodes
from torchlint.engine.semantic.kinds import PROCESS_GROUP_INIT


class ProcessGroupSetUp:
    def __init__(self, helper: Callable[[cst.BaseExpression], bool]) -> None:
        self.helper = helper  # the project function a call runs sets it up (calling_context.py resolves it)
        self._functions: dict[cst.FunctionDef, bool] = {}
        self._statements: dict[cst.BaseStatement, bool] = {}

    def statement(self, stmt: cst.BaseStatement) -> bool:
        """`stmt` sets the process group up (memoised: every later point of a block asks again)."""
        known = self._statements.get(stmt)
        if known is None and type(stmt) in (cst.FunctionDef, cst.ClassDef):
            known = self._statements[stmt] = False  # defined, not run
        if known is None:
            nodes = iter_nodes(stmt, into_functions=False)
            known = self._statements[stmt] = any(type(n) is cst.Call and self.call(n) for n in nodes)
        return known

    def call(self, call: cst.Call) -> bool:
        func = call.func
        last = func.attr.value if type(func) is cst.Attribute else func.value if type(func) is cst.Name else None
        if last in PROCESS_GROUP_INIT:
            return True
        return self.helper(func)

    def function(self, fn: cst.FunctionDef) -> bool:
        """Some statement of `fn`'s body sets the process group up (recursion: not proven)."""
        known = self._functions.get(fn)
        if known is None:
            self._functions[fn] = False  # a recursive call proves nothing
            known = self._functions[fn] = any(self.statement(s) for s in block_statements(fn.body))
        return known
