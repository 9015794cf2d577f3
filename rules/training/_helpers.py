"""What more than one training rule needs."""

from __future__ import annotations

from pathlib import PurePath

import libcst as cst

from torchlint.engine.loop_events import Event
from torchlint.engine.names import dotted
from torchlint.engine.rule import Rule
from torchlint.engine.walk import block_statements


class LoopRule(Rule):
    """Shared plumbing: run `_check` on every loop with its events."""

    def visit_For(self, node: cst.For) -> None:
        self._check(node, self.ctx.loop_analysis.events(node))

    def visit_While(self, node: cst.While) -> None:
        self._check(node, self.ctx.loop_analysis.events(node))

    def _check(self, loop, events: list[Event]) -> None:
        raise NotImplementedError

    def _code(self, node: cst.CSTNode) -> str:
        return self.ctx.module.code_for_node(node)

    def _first(self, loop) -> cst.BaseStatement | None:
        """The loop body's first statement, when the body is an indented block."""
        return block_statements(loop.body)[0] if isinstance(loop.body, cst.IndentedBlock) else None


def dotted_or(expr: cst.BaseExpression | None, default: str) -> str:
    return (dotted(expr) if expr is not None else None) or default


def same_target(a: Event, b: Event) -> bool:
    na, nb = dotted_or(a.target, ""), dotted_or(b.target, "")
    return not na or not nb or na == nb


def is_test_file(path: str) -> bool:
    p = PurePath(path)
    return (
        p.name.startswith("test_")
        or p.name.endswith("_test.py")
        or p.name == "conftest.py"
        or any(part in ("test", "tests", "testing") for part in p.parts[:-1])
    )
