"""What more than one training rule needs."""

from __future__ import annotations

from functools import lru_cache
from pathlib import PurePath

import libcst as cst

from torchlint.engine.context import FileContext
from torchlint.engine.core.callargs import get_arg, is_name
from torchlint.engine.core.walk import block_statements
from torchlint.engine.flow.blocks import Loop
from torchlint.engine.flow.graph_flow import assignments, body_of
from torchlint.engine.flow.loop_events import Event, EventKind
from torchlint.engine.rule import Rule
from torchlint.engine.semantic.kinds import Kind
from torchlint.engine.semantic.names import dotted


class LoopRule(Rule):
    """Shared plumbing: run `_check` on every loop with its events."""

    def visit_For(self, node: cst.For) -> None:
        self._check(node, self.ctx.loop_analysis.events(node))

    def visit_While(self, node: cst.While) -> None:
        self._check(node, self.ctx.loop_analysis.events(node))

    def _check(self, loop: Loop, events: list[Event]) -> None:
        raise NotImplementedError

    def _code(self, node: cst.CSTNode) -> str:
        return self.ctx.module.code_for_node(node)

    def _first(self, loop: Loop) -> cst.BaseStatement | None:
        """The loop body's first statement, when the body is an indented block."""
        return block_statements(loop.body)[0] if isinstance(loop.body, cst.IndentedBlock) else None


def dotted_or(expr: cst.BaseExpression | None, default: str) -> str:
    return (dotted(expr) if expr is not None else None) or default


def same_target(a: Event, b: Event) -> bool:
    na, nb = dotted_or(a.target, ""), dotted_or(b.target, "")
    return not na or not nb or na == nb


def scaler_of(ctx: FileContext, event: Event) -> cst.BaseExpression | None:
    """The GradScaler of a scaled backward (`scaler.scale(loss).backward()` directly in the loop), unless
    every construction of it in sight is `GradScaler(enabled=False)` (then `scale`/`step` pass through)."""
    target = event.target
    if event.kind is not EventKind.BACKWARD or event.via is not None or not isinstance(target, cst.Call):
        return None
    if not isinstance(target.func, cst.Attribute) or target.func.attr.value != "scale":
        return None
    scaler = target.func.value
    if not ctx.kind(scaler) & Kind.SCALER:
        return None
    at = body_of(ctx).index(event.node)
    found = assignments(ctx, scaler, at) if at is not None else []
    if found and all(isinstance(d.value, cst.Call) and _disabled(d.value) for _, d in found):
        return None
    return scaler


def _disabled(call: cst.Call) -> bool:
    enabled = get_arg(call, "enabled")
    return enabled is not None and is_name(enabled.value, "False")


@lru_cache(maxsize=64)
@lru_cache(maxsize=64)
def is_test_file(path: str) -> bool:
    p = PurePath(path)
    return (
        p.name.startswith("test_")
        or p.name.endswith("_test.py")
        or p.name == "conftest.py"
        or any(part in ("test", "tests", "testing") for part in p.parts[:-1])
    )


def wrapped_in_no_grad(ctx: FileContext, stmt: cst.BaseStatement) -> str | None:
    """The text of `stmt` wrapped in `with torch.no_grad():`, to replace it (None: no safe spelling)."""
    if ctx.imports.table.get("torch") != "torch":
        return None
    return ctx.layout.wrapped_in("with torch.no_grad():", stmt)
