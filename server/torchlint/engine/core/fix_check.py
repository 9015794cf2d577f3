"""Whether a fix emits valid Python that changes nothing outside its own edits.

A rule builds its fix from code fragments; a wrong join (`f(x, , y)`), a comment
swallowing a bracket or a line inserted at the wrong indentation must never reach
the user. The runner asks `keeps_parse` of every fix before a finding carries it,
so a fix that fails is dropped at the source (the finding is then not fixable).

Only the lines of the top-level statements the edits touch are edited and re-parsed
(with CPython's parser): the text before and after them is unchanged and starts and ends
with complete statements, so the whole file parses exactly when they do. Inside
those lines, every statement no edit touches must come back, in order, at the same
depth and with the same tree (a compound statement's header: its body's statements
are compared one by one).
"""

from __future__ import annotations

import ast
import bisect
import copy
import sys
from collections.abc import Iterator, Sequence
from functools import lru_cache

from torchlint.engine.core.source import apply_edits, python_ast, split_lines
from torchlint.findings import Edit

_Point = tuple[int, int]  # 1-based line, 1-based column (code points)
_Span = tuple[_Point, _Point]
_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")
_DECORATED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_REFUSED = (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError)


def keeps_parse(text: str, edits: Sequence[Edit], outline: Sequence[tuple[int, int]] | None = None) -> bool:
    """`text` with `edits` applied parses, and every statement outside the edits is still there.
    `outline`: the (first, last) line of each top-level statement, when the caller has them (the
    runner's position pass); else CPython's tree of the whole text gives them."""
    if not edits:
        return True
    try:
        lines, tops = _lines(text), outline if outline else _outline(text)
    except _REFUSED:
        return False  # an original CPython cannot read leaves nothing to check a fix against
    first, last = _region(tops, edits)
    old_region = "\n".join(lines[first - 1 : last]) + "\n"
    moved = [Edit(e.line - first + 1, e.column, e.end_line - first + 1, e.end_column, e.content) for e in edits]
    try:
        new_region = apply_edits(old_region, moved)
        old_tree, new_tree = ast.parse(old_region), ast.parse(new_region)
    except _REFUSED:
        return False
    spans = [((e.line, e.column), (e.end_line, e.end_column)) for e in moved]
    region_lines = lines[first - 1 : last]
    kept = [(depth, _header(s)) for depth, s in _statements(old_tree.body, 0) if not _touched(s, spans, region_lines)]
    found = iter([(depth, _header(s)) for depth, s in _statements(new_tree.body, 0)])
    return all(statement in found for statement in kept)  # in order: `in` consumes the iterator


@lru_cache(maxsize=2)
def _lines(text: str) -> list[str]:
    """Asked once per fix, for every fix of a file."""
    return split_lines(text)


@lru_cache(maxsize=2)
def _outline(text: str) -> list[tuple[int, int]]:
    return [(_start(s).lineno, s.end_lineno or s.lineno) for s in python_ast(text).body]


def _region(tops: Sequence[tuple[int, int]], edits: Sequence[Edit]) -> tuple[int, int]:
    """The first and last line of the top-level statements the edits touch. An insertion at a line's
    start also touches the line before: it may extend the block that ends there."""
    lines = [e.line - (e.column == 1 and e.line > 1) for e in edits]
    lines += [e.end_line - (e.end_column == 1 and e.end_line > e.line) for e in edits]
    first, last = min(lines), max(lines)
    at = bisect.bisect_right(tops, (last, sys.maxsize))  # statements starting after `last` cannot touch
    for start, end in reversed(tops[:at]):
        if end < first:
            break  # top-level statements do not overlap: the earlier ones end earlier still
        first, last = min(first, start), max(last, end)
    return first, last


def _start(stmt: ast.stmt) -> ast.stmt | ast.expr:
    return stmt.decorator_list[0] if isinstance(stmt, _DECORATED) and stmt.decorator_list else stmt


def _statements(body: Sequence[ast.AST], depth: int) -> Iterator[tuple[int, ast.stmt]]:
    for node in body:
        if isinstance(node, ast.stmt):
            yield depth, node
        for field in _BODIES:
            yield from _statements(getattr(node, field, ()), depth + 1)


def _header(stmt: ast.stmt) -> str:
    """The statement's tree without the statements of its bodies (they are compared on their own)."""
    if not any(getattr(stmt, field, None) for field in _BODIES):
        return ast.dump(stmt)
    shallow = copy.copy(stmt)
    for field in _BODIES:
        if hasattr(shallow, field):
            setattr(shallow, field, [])
    return ast.dump(shallow)


def _touched(stmt: ast.stmt, spans: Sequence[_Span], lines: Sequence[str]) -> bool:
    start = _start(stmt)
    begin = (start.lineno, _column(lines, start.lineno, start.col_offset))
    end_line = stmt.end_lineno or stmt.lineno
    end = (end_line, _column(lines, end_line, stmt.end_col_offset or 0))
    return any((begin < b < end) if b == e else (begin < e and b < end) for b, e in spans)


def _column(lines: Sequence[str], line: int, byte_offset: int) -> int:
    """CPython's UTF-8 byte offset as a 1-based code point column (the edits' unit)."""
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    if text.isascii():
        return byte_offset + 1
    return len(text.encode()[:byte_offset].decode(errors="ignore")) + 1
