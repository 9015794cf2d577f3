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
