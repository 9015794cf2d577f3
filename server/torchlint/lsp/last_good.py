"""Typing through a syntax error.

While a line is half typed (`oops = foo(1,`) the document does not parse and a
lint finds nothing but the parse error. Blanking every other finding on each
keystroke makes them flicker away and back; instead the findings of the last
text that parsed stay, moved to where their lines are now, on every line that
did not change since. Their fixes are dropped (they were computed for the old
text); the parse error itself shows where CPython puts it.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass

from lsprotocol import types

from torchlint.lsp.coordinates import LineIndex

PARSE_ERROR = "TL000"


@dataclass(frozen=True)
class Lint:
    """One document's (or cell's) text and its diagnostics."""

    text: str
    diagnostics: list[types.Diagnostic]


def broken(result: Mapping[str, list[types.Diagnostic]]) -> bool:
    return any(d.code == PARSE_ERROR for diags in result.values() for d in diags)


def _line_map(old: str, new: str) -> dict[int, int]:
    """0-based old line -> new line, for the lines that did not change."""
    a, b = LineIndex(old).lines, LineIndex(new).lines
    out: dict[int, int] = {}
    for tag, i1, i2, j1, _ in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            out.update((i1 + k, j1 + k) for k in range(i2 - i1))
    return out


def _moved(d: types.Diagnostic, lines: Mapping[int, int], generation: int) -> types.Diagnostic | None:
    start, end = lines.get(d.range.start.line), lines.get(d.range.end.line)
    if start is None or end is None or end - start != d.range.end.line - d.range.start.line:
        return None  # a line of it changed
    data = d.data if isinstance(d.data, dict) else None
    if data is not None:
        noqa = [lines[n] for n in data.get("noqa") or () if n in lines]
        data = {**data, "generation": generation, "fixes": [], "noqa": noqa, "preferred": False}
    return types.Diagnostic(
        types.Range(
            types.Position(start, d.range.start.character),
            types.Position(end, d.range.end.character),
        ),
        d.message,
        severity=d.severity,
        code=d.code,
        code_description=d.code_description,
        source=d.source,
        data=data,
    )


def carried(last: Lint, text: str, fresh: list[types.Diagnostic], generation: int) -> list[types.Diagnostic]:
    """`fresh` (a lint of the broken `text`) with the findings of `last` that still stand on unchanged lines."""
    lines = _line_map(last.text, text)
    seen = {(d.code, d.range.start.line, d.range.start.character) for d in fresh}
    out = list(fresh)
    for d in last.diagnostics:
        if d.code == PARSE_ERROR:
            continue
        moved = _moved(d, lines, generation)
        if moved is not None and (moved.code, moved.range.start.line, moved.range.start.character) not in seen:
            out.append(moved)
    return out
