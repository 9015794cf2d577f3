"""Between torchlint's positions (1-based lines, columns in code points) and
LSP positions (0-based, columns in the negotiated encoding: UTF-16 unless the
client offers UTF-8 or UTF-32). Lines are split exactly where the parser
splits them, so a Chinese comment or an emoji never shifts a range.
"""

from __future__ import annotations

from collections.abc import Mapping

from lsprotocol import types


def _units(text: str, encoding: str) -> int:
    if encoding == types.PositionEncodingKind.Utf32 or text.isascii():
        return len(text)
    if encoding == types.PositionEncodingKind.Utf8:
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


class LineIndex:
    """Position conversions for one text."""

    def __init__(self, text: str, encoding: str = types.PositionEncodingKind.Utf16) -> None:
        from torchlint.engine.core.source import split_lines  # not at import: the engine loads libcst

        self.lines = split_lines(text)
        self.encoding = encoding

    def to_lsp(self, line: int, column: int) -> types.Position:
        """1-based line and code-point column -> LSP position, clamped to the text."""
        if line < 1:
            return types.Position(0, 0)
        if line > len(self.lines):
            last = len(self.lines) - 1
            return types.Position(last, _units(self.lines[last], self.encoding))
        text = self.lines[line - 1]
        return types.Position(line - 1, _units(text[: max(column - 1, 0)], self.encoding))

    def range(self, line: int, column: int, end_line: int, end_column: int) -> types.Range:
        return types.Range(self.to_lsp(line, column), self.to_lsp(end_line, end_column))

    def from_lsp(self, pos: types.Position) -> tuple[int, int]:
        """LSP position -> 1-based line and code-point column (clamped)."""
        line = min(max(pos.line, 0), len(self.lines) - 1)
        text = self.lines[line]
        want = max(pos.character, 0)
        if self.encoding == types.PositionEncodingKind.Utf32 or text.isascii():
            return line + 1, min(want, len(text)) + 1
        units = 0
        for i, ch in enumerate(text):
            if units >= want:
                return line + 1, i + 1
            units += _units(ch, self.encoding)
        return line + 1, len(text) + 1

    def end(self) -> types.Position:
        return self.to_lsp(len(self.lines) + 1, 1)


def line_map(old: str, new: str) -> dict[int, int]:
    """0-based old line -> new line, for the lines before and after the part that changed
    (an edit between two lints is one place being typed at; linear, where a diff is not)."""
    a, b = LineIndex(old).lines, LineIndex(new).lines
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    out = {i: i for i in range(head)}
    out.update((len(a) - 1 - k, len(b) - 1 - k) for k in range(tail))
    return out


def moved_range(rng: types.Range, lines: Mapping[int, int]) -> types.Range | None:
    """`rng` on the lines `line_map` moved its lines to; None when a line of it changed."""
    start, end = lines.get(rng.start.line), lines.get(rng.end.line)
    if start is None or end is None or end - start != rng.end.line - rng.start.line:
        return None
    return types.Range(types.Position(start, rng.start.character), types.Position(end, rng.end.character))
