"""What the runner keeps on the context while it walks: the statement line, its block and the `if`s around it."""

from __future__ import annotations

import libcst as cst

from torchlint.engine import lint_text
from torchlint.engine.rule import Rule

SOURCE = """\
import torch
setup()
if __name__ == "__main__":
    main()
    if debug:
        check()
    elif verbose:
        note(); more()
for x in xs:
    with ctx():
        step(x)
"""


class _Recorder(Rule):
    """Not a rule: records the traversal state at every call."""

    seen: dict[str, tuple] = {}

    def visit_Call(self, node: cst.Call) -> None:
        name = node.func.value if isinstance(node.func, cst.Name) else "?"
        statement = self.ctx.statement
        self.seen[name] = (
            cst.Module([statement]).code.strip() if statement is not None else None,
            len(self.ctx.block),
            len(self.ctx.ifs),
            self.ctx.under_main_guard,
            self.ctx.under_condition,
        )


def test_the_context_knows_the_statement_block_and_guards_of_each_node():
    _Recorder.seen = {}
    lint_text("t.py", SOURCE, [_Recorder], prefilter=False)
    seen = _Recorder.seen
    assert seen["setup"] == ("setup()", 4, 0, False, False)
    assert seen["main"] == ("main()", 2, 1, True, False)
    assert seen["check"] == ("check()", 1, 2, True, True)
    assert seen["note"] == ("note(); more()", 1, 3, True, True)  # an elif is an `if` inside the `else`
    assert seen["ctx"] == (None, 1, 0, False, False)  # a `with` header is no statement line
    assert seen["step"] == ("step(x)", 1, 0, False, False)


LOOPS = """\
for epoch in range(3):
    def step(batch):
        for part in batch:
            run(part)
        once()
    top(epoch)
"""


class _LoopRecorder(Rule):
    """Not a rule: records the loops of the innermost function and that function's statements at every call."""

    seen: dict[str, tuple] = {}

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name):
            loops = [loop.target.value for loop in self.ctx.own_loops if isinstance(loop.target, cst.Name)]
            self.seen[node.func.value] = (loops, len(self.ctx.body_statements))


def test_the_context_knows_the_loops_and_statements_of_the_innermost_function():
    _LoopRecorder.seen = {}
    lint_text("t.py", LOOPS, [_LoopRecorder], prefilter=False)
    seen = _LoopRecorder.seen
    assert seen["top"] == (["epoch"], 1)  # module level: every loop around it, the module's one statement
    assert seen["run"] == (["part"], 2)  # in `step`: its own loop only, not the epoch loop around the def
    assert seen["once"] == ([], 2)
