"""Typing through a syntax error.

While a line is half typed (`oops = foo(1,`) the document does not parse and a
lint finds nothing but the parse error. Blanking every other finding on each
keystroke makes them flicker away and back; instead the findings of the last
text that parsed stay, moved to where their lines are now, on every line that
did not change since. Their fixes are dropped (they were computed for the old
text); the parse error itself shows where CPython puts it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from lsprotocol import types

from torchlint.lsp.coordinates import line_map, moved_range

PARSE_ERROR = "TL000"


@dataclass(frozen=True)
class Lint:
    """One document's (or cell's) text and its diagnostics."""

    text: str
    diagnostics: list[types.Diagnostic]


def broken(result: Mapping[str, list[types.Diagnostic]]) -> bool:
    return any(d.code == PARSE_ERROR for diags in result.values() for d in diags)


def _moved(d: types.Diagnostic, lines: Mapping[int, int], generation: int) -> types.Diagnostic | None:
    rng = moved_range(d.range, lines)
    if rng is None:
        return None  # a line of it changed
    data = d.data if isinstance(d.data, dict) else None
    if data is not None:
        noqa = [lines[n] for n in data.get("noqa") or () if n in lines]
        data = {**data, "generation": generation, "fixes": [], "noqa": noqa}
    return types.Diagnostic(
        rng,
        d.message,
        severity=d.severity,
        code=d.code,
        code_description=d.code_description,
        source=d.source,
        data=data,
    )


def carried(last: Lint, text: str, fresh: list[types.Diagnostic], generation: int) -> list[types.Diagnostic]:
    """`fresh` (a lint of the broken `text`) with the findings of `last` that still stand on unchanged lines."""
    lines = line_map(last.text, text)
    seen = {(d.code, d.range.start.line, d.range.start.character) for d in fresh}
    out = list(fresh)
    for d in last.diagnostics:
        if d.code == PARSE_ERROR:
            continue
        moved = _moved(d, lines, generation)
        if moved is not None and (moved.code, moved.range.start.line, moved.range.start.character) not in seen:
            out.append(moved)
    return out
