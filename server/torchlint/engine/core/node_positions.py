"""Node positions, computed by one lean code-generation pass.

libcst's PositionProvider (through MetadataWrapper) costs more than the parse
itself; this pass records the same syntactic ranges as plain (line, column)
tuples and writes no output text. It only runs for files that have findings.

libcst has no public hook into its code generation (its public PositionProvider
is 4-7x slower than this pass), so the pass subclasses the private `CodegenState`:
pyproject.toml bounds libcst to the versions it is tested on, and test_positions.py
compares every range with PositionProvider's, so a change in that API fails loudly.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import libcst as cst
from libcst._nodes.internal import CodegenState

_NEWLINE = re.compile(r"\r\n?|\n")

Position = tuple[int, int]  # 1-based line, 0-based column (libcst's convention)
Range = tuple[Position, Position]  # (start, end), end exclusive


@dataclass
class _PositionState(CodegenState):
    line: int = 1
    column: int = 0
    starts: list[Position] = field(default_factory=list)  # of the nodes being generated, innermost last
    ranges: dict[cst.CSTNode, Range] = field(default_factory=dict)

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self.column += len(token)

    def add_token(self, value: str) -> None:
        if "\n" in value or "\r" in value:
            parts = _NEWLINE.split(value)
            self.line += len(parts) - 1
            self.column = len(parts[-1])
        else:
            self.column += len(value)

    def before_codegen(self, node: cst.CSTNode) -> None:
        self.starts.append((self.line, self.column))

    def after_codegen(self, node: cst.CSTNode) -> None:
        start = self.starts.pop()
        if node not in self.ranges:
            self.ranges[node] = (start, (self.line, self.column))

    @contextmanager
    def record_syntactic_position(
        self,
        node: cst.CSTNode,
        *,
        start_node: cst.CSTNode | None = None,
        end_node: cst.CSTNode | None = None,
    ) -> Iterator[None]:
        start = (self.line, self.column)
        try:
            yield
        finally:
            end = (self.line, self.column)
            if start_node is not None:
                start = self.ranges[start_node][0]
            if end_node is not None:
                end = self.ranges[end_node][1]
            self.ranges[node] = (start, end)


def positions(
    module: cst.Module, only: Collection[cst.CSTNode] | None = None, outline: list[tuple[int, int]] | None = None
) -> dict[cst.CSTNode, Range]:
    """Syntactic (start, end) of nodes, as libcst's PositionProvider defines them.

    With `only` (a set of top-level statements), positions are recorded just
    inside those; the others are skipped over as plain text, which is ~7x cheaper.
    `outline`, when given, gets the first and last line of every top-level statement
    (its leading comment lines included), free in this pass: fix_check needs them.
    """
    state = _PositionState(default_indent=module.default_indent, default_newline=module.default_newline)
    for line in module.header:
        line._codegen(state)
    for stmt in module.body:
        first = state.line
        if only is None or stmt in only:
            stmt._codegen(state)
        else:
            state.add_token(module.code_for_node(stmt))
        if outline is not None:
            outline.append((first, state.line - 1 if state.column == 0 else state.line))
    return state.ranges
