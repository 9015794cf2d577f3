"""What the server lints: an open Python file, or the code cells of an open
notebook joined into one program (torchlint.notebook), with the way back from
program positions to the document (or cell) and LSP position they belong to.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lsprotocol import types

from torchlint import notebook
from torchlint.lsp.positions import LineIndex
from torchlint.lsp.uris import to_path


@dataclass(frozen=True)
class Part:
    uri: str
    text: str


@dataclass
class Snapshot:
    """An immutable copy of one document's text at one generation."""

    key: str  # the text document or notebook URI
    generation: int
    path: str
    text: str  # the program that is linted
    parts: tuple[Part, ...]
    encoding: str
    program: notebook.Program | None = None
    cells: dict[int, Part] = field(default_factory=dict)  # notebook cell index -> its part
    _indexes: dict[str, LineIndex] = field(default_factory=dict)

    def index(self, uri: str) -> LineIndex:
        idx = self._indexes.get(uri)
        if idx is None:
            text = next((p.text for p in self.parts if p.uri == uri), "")
            idx = self._indexes[uri] = LineIndex(text, self.encoding)
        return idx

    def place(self, line: int, column: int) -> tuple[str, int, int] | None:
        """(uri, line, column) in the document or cell of a program position."""
        if self.program is None:
            return self.parts[0].uri, line, column
        at = self.program.locate(line, column)
        if at is None or at[0] not in self.cells:
            return None
        return self.cells[at[0]].uri, at[1], at[2]

    def lsp_range(self, line: int, column: int, end_line: int, end_column: int) -> tuple[str, types.Range] | None:
        start, end = self.place(line, column), self.place(end_line, end_column)
        if start is None or end is None or start[0] != end[0]:
            return None
        idx = self.index(start[0])
        return start[0], idx.range(start[1], start[2], end[1], end[2])


def text_snapshot(uri: str, text: str, generation: int, encoding: str) -> Snapshot:
    return Snapshot(uri, generation, to_path(uri), text, (Part(uri, text),), encoding)


def notebook_snapshot(uri: str, cells: list[tuple[str, str, bool]], generation: int, encoding: str) -> Snapshot:
    """`cells`: (cell URI, text, is a Python code cell) in notebook order."""
    nb_cells = [notebook.Cell(i, text, "code" if code else "other") for i, (_, text, code) in enumerate(cells)]
    program = notebook.build(nb_cells)
    parts = {i: Part(u, text) for i, (u, text, code) in enumerate(cells) if code}
    return Snapshot(uri, generation, to_path(uri), program.text, tuple(parts.values()), encoding, program, parts)
