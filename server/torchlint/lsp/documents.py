"""What the server lints: an open Python file, or the code cells of an open
notebook joined into one program (torchlint.notebook), with the way back from
program positions to the document (or cell) and LSP position they belong to.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import unquote

from lsprotocol import types
from pygls.workspace import TextDocument, Workspace

from torchlint import notebook
from torchlint.lsp.coordinates import LineIndex
from torchlint.lsp.uris import to_path


@dataclass(frozen=True)
class Part:
    uri: str
    text: str


@dataclass
class Snapshot:
    """The text of one document, or of one notebook's code cells, as of one generation.

    The lint thread works on it while the editor goes on changing the live
    document; its fields never change (line indexes are built on first use).
    """

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


def encoding(workspace: Workspace) -> str:
    """The position encoding the client and server agreed on."""
    return str(workspace.position_encoding or types.PositionEncodingKind.Utf16)


def owner(workspace: Workspace, uri: str) -> str:
    """The key a document is linted under: its notebook for a cell, else itself. Keys are the URI strings
    the client sent (`a%2Bb` stays so): what is published under them is what the client compares."""
    nb = workspace.get_notebook_document(cell_uri=uri)
    return str(nb.uri) if nb is not None else uri


def code_cells(workspace: Workspace, key: str) -> dict[int, str] | None:
    """The open notebook `key`'s code cells: 1-based cell number (counting every cell, as findings name
    cells) -> the cell's URI; None when `key` is not an open notebook."""
    nb = workspace.get_notebook_document(notebook_uri=key)
    if nb is None:
        return None
    return {i + 1: c.document for i, c in enumerate(nb.cells) if c.kind == types.NotebookCellKind.Code}


def is_open(workspace: Workspace, key: str) -> bool:
    return _open(workspace, key) is not None or workspace.get_notebook_document(notebook_uri=key) is not None


def _open(workspace: Workspace, key: str) -> TextDocument | None:
    doc: TextDocument | None = workspace.text_documents.get(unquote(key))  # pygls keys them decoded
    return doc


def source(workspace: Workspace, key: str) -> str | None:
    """The live text of an open text document or cell."""
    doc = _open(workspace, key)
    return None if doc is None else doc.source


def version(workspace: Workspace, key: str) -> int | None:
    doc = _open(workspace, key)
    return None if doc is None else doc.version


def snapshot(workspace: Workspace, key: str, generation: int) -> Snapshot | None:
    """A copy of what is open under `key` now (None if nothing is)."""
    nb = workspace.get_notebook_document(notebook_uri=key)
    if nb is not None:
        cells = []
        for cell in nb.cells:
            doc = _open(workspace, cell.document)
            code = cell.kind == types.NotebookCellKind.Code and doc is not None and doc.language_id in (None, "python")
            cells.append((cell.document, doc.source if doc is not None else "", code))
        return notebook_snapshot(key, cells, generation, encoding(workspace))
    text = source(workspace, key)
    return None if text is None else text_snapshot(key, text, generation, encoding(workspace))
