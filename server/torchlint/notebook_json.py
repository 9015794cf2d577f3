"""Where each cell's source lies in a notebook file's JSON text.

Two uses: CI annotations (SARIF, GitHub) must name a line and column of the
file on disk, not of the cell; and `--fix` rewrites only the `source` of the
cells it changed, leaving every other byte of the file as it was (so `--diff`
shows just those lines and the notebook keeps whatever layout its writer chose).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class SourceSpan:
    """The `source` value of one cell: its span in the text and the spans of its strings."""

    start: int
    end: int
    strings: tuple[tuple[int, int], ...]  # each string token, quotes included


class Layout:
    """The spans of every cell's `source` in one notebook text."""

    def __init__(self, text: str, spans: dict[int, SourceSpan]) -> None:
        self.text = text
        self.spans = spans

    @classmethod
    def of(cls, text: str) -> Layout | None:
        """None when `text` is not a notebook whose cells we can find."""
        try:
            return cls(text, _cell_sources(text))
        except (ValueError, IndexError, TypeError):
            return None

    def source(self, cell: int) -> str | None:
        span = self.spans.get(cell)
        return None if span is None else "".join(json.loads(self.text[a:b]) for a, b in span.strings)

    def position(self, cell: int, line: int, column: int) -> tuple[int, int] | None:
        """The file's (line, column), 1-based, of a position in a cell; None for an unknown cell."""
        from torchlint.engine.core.source import line_offsets

        span = self.spans.get(cell)
        if span is None:
            return None
        pieces = [json.loads(self.text[a:b]) for a, b in span.strings]
        starts = line_offsets("".join(pieces))
        offset = starts[max(1, min(line, len(starts))) - 1] + max(column, 1) - 1
        at = span.start  # an empty source: the value itself
        for (a, b), piece in zip(span.strings, pieces):
            at = a + _raw_index(self.text[a:b], min(offset, len(piece)))
            if offset < len(piece):
                break
            offset -= len(piece)
        line_start = self.text.rfind("\n", 0, at) + 1
        return self.text.count("\n", 0, at) + 1, at - line_start + 1

    def with_sources(self, sources: dict[int, str]) -> str:
        """The text with these cells' sources replaced, written in the style of the value they replace."""
        out, pos = [], 0
        for cell in sorted(sources, key=lambda c: self.spans[c].start):
            span = self.spans[cell]
            out.append(self.text[pos : span.start])
            out.append(self._value(span, sources[cell]))
            pos = span.end
        out.append(self.text[pos:])
        return "".join(out)

    def _value(self, span: SourceSpan, source: str) -> str:
        if self.text[span.start] == '"':  # the source was one string: keep it one
            return _dumps(source)
        strings = [_dumps(s) for s in source.splitlines(keepends=True)]
        if not span.strings:  # `[]`: Jupyter's layout, indented one more than the line holding it
            line_start = self.text.rfind("\n", 0, span.start) + 1
            indent = _WHITESPACE.match(self.text, line_start).group().replace("\n", "").replace("\r", "")
            opening, closing = "[\n" + indent + " ", "\n" + indent + "]"
        else:
            opening = self.text[span.start : span.strings[0][0]]
            closing = self.text[span.strings[-1][1] : span.end]
        if len(span.strings) > 1:
            separator = self.text[span.strings[0][1] : span.strings[1][0]]
        else:
            separator = "," + opening[1:]
        if not strings:
            return "[]"
        return opening + separator.join(strings) + closing


def _dumps(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)  # as Jupyter writes


def _raw_index(token: str, k: int) -> int:
    """Index in a JSON string token (quotes included) of its k-th decoded character."""
    i = 1
    for _ in range(k):
        if token[i] != "\\":
            i += 1
        elif token[i + 1] != "u":
            i += 2
        elif 0xD800 <= int(token[i + 2 : i + 6], 16) < 0xDC00 and token.startswith("\\u", i + 6):
            i += 12  # a surrogate pair decodes to one character
        else:
            i += 6
    return i


def _skip(text: str, i: int) -> int:
    return _WHITESPACE.match(text, i).end()


def _expect(text: str, i: int, char: str) -> int:
    if text[i] != char:
        raise ValueError(f"expected {char!r} at {i}")
    return _skip(text, i + 1)


def _value_end(text: str, i: int) -> int:
    return _DECODER.raw_decode(text, i)[1]


def _members(text: str, i: int) -> list[tuple[str, int, int]]:
    """(key, value start, value end) of the object starting at `i`."""
    i = _expect(text, i, "{")
    out: list[tuple[str, int, int]] = []
    if text[i] == "}":
        return out
    while True:
        key, i = _DECODER.raw_decode(text, i)
        i = _expect(text, _skip(text, i), ":")
        end = _value_end(text, i)
        out.append((key, i, end))
        i = _skip(text, end)
        if text[i] == "}":
            return out
        i = _expect(text, i, ",")


def _elements(text: str, i: int) -> list[tuple[int, int]]:
    """(start, end) of each element of the array starting at `i`."""
    i = _expect(text, i, "[")
    out: list[tuple[int, int]] = []
    if text[i] == "]":
        return out
    while True:
        end = _value_end(text, i)
        out.append((i, end))
        i = _skip(text, end)
        if text[i] == "]":
            return out
        i = _expect(text, i, ",")


def _last(members: list[tuple[str, int, int]], key: str) -> tuple[int, int] | None:
    found = [(a, b) for k, a, b in members if k == key]  # json.loads keeps the last of duplicate keys
    return found[-1] if found else None


def _cell_sources(text: str) -> dict[int, SourceSpan]:
    cells = _last(_members(text, _skip(text, 0)), "cells")
    if cells is None:
        raise ValueError("no cells")
    out = {}
    for index, (start, _) in enumerate(_elements(text, cells[0])):
        source = _last(_members(text, start), "source")
        if source is None:
            continue
        a, b = source
        strings = tuple(_elements(text, a)) if text[a] == "[" else ((a, b),)
        out[index] = SourceSpan(a, b, strings)
    return out
