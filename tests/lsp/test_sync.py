"""Ranged (incremental) changes keep the server's text identical to the editor's, in files and
notebook cells, as vscode-languageclient sends them: every keystroke a ranged change, cells
inserted, deleted, moved and pasted through `notebookDocument/didChange`.

The editor's side is modelled here (lsp_session.apply applies edits as an editor does); after
each step the server's findings must equal those of the same text opened afresh, and its text
shows through the "Disable for this line" action, which rewrites the whole line it has.
"""

from __future__ import annotations

import asyncio
import itertools
import logging

import pytest
from lsp_session import BUGGY, KINDS, apply, edits_for, ranged, session, uri
from lsprotocol import types

from torchlint.lsp import sync

UTF16 = types.PositionEncodingKind.Utf16

SETUP = "import torch\nmodel = torch.nn.Linear(4, 2)\noptimizer = torch.optim.Adam(model.parameters())\n"
LOOP = (
    "for x, y in loader:\n    loss = torch.nn.functional.mse_loss(model(x), y)\n"
    "    loss.backward()\n    optimizer.step()\n"
)


def _key(diags):
    return sorted((d.code, d.range.start.line, d.range.start.character, d.range.end.line) for d in diags)


async def _server_line(s, u: str, code: str) -> str:
    """The line of `u`'s `code` finding as the server has it now: its noqa action replaces that
    whole line. Only a diagnostic of the server's current text has one, so a diagnostic published
    before the last edits reached the server is waited past."""

    async def line() -> str:
        while True:
            seen = s.client.diagnostics.get(u, [])
            for diag in seen:
                if diag.code != code:
                    continue
                actions = await s.client.text_document_code_action_async(
                    types.CodeActionParams(types.TextDocumentIdentifier(u), diag.range, types.CodeActionContext([diag]))
                )
                for a in actions:
                    if a.title.startswith("Disable"):
                        (edit,) = edits_for(a.edit, u)
                        return edit.new_text.removesuffix(f"  # noqa: {code}")
            if s.client.diagnostics.get(u, []) is seen:  # none landed while the actions were answered
                await s.client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)

    return await asyncio.wait_for(line(), 60)


def _typed(s, u: str, text: str, line: int, typed: str) -> str:
    """Type `typed` at the end of `line`, one ranged change per character; the editor's new text."""
    end = len(text.split("\n")[line].encode("utf-16-le")) // 2
    for i, ch in enumerate(typed):
        s.edit(u, (line, end + i), (line, end + i), ch)
    return apply(text, [types.TextEdit(types.Range(types.Position(line, end), types.Position(line, end)), typed)])


def test_ranged_changes_apply_at_lsp_positions():
    text = "a😀b\r\nsecond\rthird\x0cstill third\n"
    assert sync.apply(text, ranged((0, 3), (0, 3), "X"), UTF16) == "a😀Xb\r\nsecond\rthird\x0cstill third\n"
    assert sync.apply(text, ranged((0, 2), (0, 2), "X"), types.PositionEncodingKind.Utf32) == text.replace("b", "Xb", 1)
    assert (
        sync.apply(text, ranged((0, 4), (1, 0), ""), UTF16) == "a😀bsecond\rthird\x0cstill third\n"
    )  # CRLF is one break
    assert sync.apply(text, ranged((2, 5), (2, 99), "!"), UTF16) == "a😀b\r\nsecond\rthird!\n"  # past the line: its end
    assert sync.apply(text, ranged((3, 0), (3, 0), "end"), UTF16) == text + "end"
    assert sync.apply("x", ranged((1, 0), (1, 0), "\n"), UTF16) == "x\n"  # the line after a last line without newline
    assert sync.apply(text, types.TextDocumentContentChangeWholeDocument("new"), UTF16) == "new"
    for bad in (
        ranged((5, 0), (5, 0), "x"),
        ranged((4, 1), (4, 1), "x"),
        ranged((1, 2), (1, 1), ""),
        ranged((1, 0), (9, 0), ""),
    ):
        with pytest.raises(sync.OutOfSync):
            sync.apply(text, bad, UTF16)


def test_a_range_length_that_disagrees_is_logged_at_debug_level(caplog):
    change = types.TextDocumentContentChangePartial(types.Range(types.Position(0, 0), types.Position(0, 3)), "", 3)
    with caplog.at_level(logging.DEBUG, logger="torchlint.lsp"):
        assert sync.apply("a😀b", change, UTF16) == "b"
        assert caplog.records == []
        sync.apply("abc", types.TextDocumentContentChangePartial(change.range, "", 2), UTF16)
    assert "the client says 2" in caplog.text


@pytest.mark.asyncio
async def test_typing_at_the_end_of_a_line_keeps_the_findings(project):
    async with session(project) as s:
        u = s.open(project / "train.py", BUGGY)
        (before,) = await s.diagnostics(u, lambda d: len(d) == 1)
        text = _typed(s, u, BUGGY, 3, "  # ok")
        text = _typed(s, u, text, 6, "  # ok")
        last = s.versions[u]
        await s.diagnostics(u, lambda d: any(p.uri == u and p.version == last for p in s.published))
        (after,) = s.client.diagnostics[u]
        assert (after.code, after.range.start) == (before.code, before.range.start)
        assert await _server_line(s, u, "TL101") == "for x, y in loader:  # ok"
        s.edit(u, (0, 0), (0, 0), "\n\n")  # lines inserted above, then deleted with a range across lines
        (moved,) = await s.diagnostics(u, lambda d: len(d) == 1 and d[0].range.start.line == 5)
        s.edit(u, (0, 0), (2, 0), "")
        (back,) = await s.diagnostics(u, lambda d: len(d) == 1 and d[0].range.start.line == 3)
        assert await _server_line(s, u, "TL101") == text.split("\n")[3]


@pytest.mark.asyncio
async def test_ranged_edits_count_utf16_units_after_emoji(project):
    text = 'import torch\nnote = "😀中"; sd = torch.load("m.pt")  # 加载\n'
    async with session(project) as s:
        u = s.open(project / "load.py", text)
        (d,) = await s.diagnostics(u, lambda d: len(d) == 1)
        at = len('note = "😀'.encode("utf-16-le")) // 2  # after the emoji: 2 UTF-16 units for it
        s.edit(u, (1, at), (1, at), "🚀")
        text = text.replace("😀", "😀🚀")
        s.edit(u, (1, at + 2), (1, at + 3), "數")  # 中 replaced: one unit
        text = text.replace("中", "數")
        (d,) = await s.diagnostics(
            u, lambda x: len(x) == 1 and x[0].range.start.character == d.range.start.character + 2
        )
        assert await _server_line(s, u, "TL601") == text.split("\n")[1]
        actions = await s.client.text_document_code_action_async(
            types.CodeActionParams(types.TextDocumentIdentifier(u), d.range, types.CodeActionContext([d]))
        )
        fix = next(a for a in actions if "weights_only" in a.title)
        assert apply(text, edits_for(fix.edit, u)) == text.replace('("m.pt")', '("m.pt", weights_only=True)')


@pytest.mark.asyncio
async def test_lines_end_only_where_lsp_says_not_at_a_form_feed(project):
    # str.splitlines() also breaks at \x0c (and \x1c, \u2028 ...): a server splitting there applies
    # every later edit one line too high
    text = 'import torch\nPAGE = "a\x0cb\u2028c"\n' + BUGGY.removeprefix("import torch\n")
    async with session(project) as s:
        u = s.open(project / "train.py", text)
        (d,) = await s.diagnostics(u, lambda d: len(d) == 1)
        assert d.range.start.line == 4
        text = _typed(s, u, text, 4, "  # ok")
        last = s.versions[u]
        await s.diagnostics(u, lambda x: any(p.uri == u and p.version == last for p in s.published))
        (d,) = s.client.diagnostics[u]
        assert await _server_line(s, u, "TL101") == "for x, y in loader:  # ok"


@pytest.mark.asyncio
async def test_a_change_that_does_not_fit_is_never_linted(project):
    async with session(project) as s:
        u = s.open(project / "train.py", BUGGY)
        await s.diagnostics(u, lambda d: len(d) == 1)
        s.edit(u, (40, 0), (40, 0), "x = 1\n")  # past the end: the server's copy is not the editor's
        assert await s.diagnostics(u, lambda d: d == []) == []
        assert any("did not fit" in m.message for m in s.client.log_messages)
        s.edit(u, (3, 0), (3, 0), "# more\n")  # still lost: ranged changes have nothing to apply to
        s.change(u, BUGGY)  # the whole text again: back in sync
        (d,) = await s.diagnostics(u, lambda d: len(d) == 1)
        assert d.code == "TL101"


class Notebook:
    """The editor's side of a notebook: its cells, and the didChange each edit sends."""

    def __init__(self, s, project, cells: list[tuple[str, str]], name: str = "nb") -> None:
        self.s, self.project, self.name = s, project, name
        self.uri = uri(project / f"{name}.ipynb")
        self.names = itertools.count()
        self.cells = [(self._new_uri(), kind, text) for kind, text in cells]
        self.version = 1
        s.client.notebook_document_did_open(
            types.DidOpenNotebookDocumentParams(
                types.NotebookDocument(self.uri, "jupyter-notebook", 1, self._cells(self.cells)),
                [self._item(c) for c in self.cells],
            )
        )

    def _new_uri(self) -> str:
        return f"vscode-notebook-cell:{self.project}/{self.name}.ipynb#c{next(self.names)}"

    @staticmethod
    def _cells(cells):
        return [types.NotebookCell(KINDS[kind], u) for u, kind, _ in cells]

    @staticmethod
    def _item(cell) -> types.TextDocumentItem:
        u, kind, text = cell
        return types.TextDocumentItem(u, "python" if kind == "code" else "markdown", 1, text)

    def _send(self, structure=None, text_content=None) -> None:
        self.version += 1
        self.s.client.notebook_document_did_change(
            types.DidChangeNotebookDocumentParams(
                types.VersionedNotebookDocumentIdentifier(self.version, self.uri),
                types.NotebookDocumentChangeEvent(
                    cells=types.NotebookDocumentCellChanges(structure=structure, text_content=text_content)
                ),
            )
        )

    def type_at_end(self, index: int, line: int, typed: str) -> None:
        """Type `typed` at the end of a cell's line, one ranged change per key (Enter included)."""
        u, kind, text = self.cells[index]
        at = len(text.split("\n")[line].encode("utf-16-le")) // 2
        start = types.Position(line, at)
        for ch in typed:
            self._send(text_content=[self._content(u, [ranged((line, at), (line, at), ch)])])
            line, at = (line + 1, 0) if ch == "\n" else (line, at + len(ch.encode("utf-16-le")) // 2)
        self.cells[index] = (u, kind, apply(text, [types.TextEdit(types.Range(start, start), typed)]))

    def _content(self, u: str, changes) -> types.NotebookDocumentCellContentChanges:
        return types.NotebookDocumentCellContentChanges(types.VersionedTextDocumentIdentifier(self.version, u), changes)

    def replace(self, index: int, edits: list[types.TextEdit]) -> None:
        """Apply `edits` to a cell as the editor does (a quick fix), one ranged change each."""
        u, kind, text = self.cells[index]
        changes = [
            ranged((e.range.start.line, e.range.start.character), (e.range.end.line, e.range.end.character), e.new_text)
            for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True)
        ]
        self._send(text_content=[self._content(u, changes)])
        self.cells[index] = (u, kind, apply(text, edits))

    def insert(self, index: int, text: str, paste: str | None = None) -> str:
        """A new code cell at `index`; `paste`: text pasted into it in the same change (ranged, at its end)."""
        cell = (self._new_uri(), "code", text)
        opened = [self._item(cell)]
        content = None
        if paste is not None:
            lines = text.split("\n")
            at = (len(lines) - 1, len(lines[-1]))
            content = [self._content(cell[0], [ranged(at, at, paste)])]
            cell = (cell[0], "code", text + paste)
        self.cells.insert(index, cell)
        self._send(
            types.NotebookDocumentCellChangeStructure(
                types.NotebookCellArrayChange(index, 0, self._cells([cell])), did_open=opened
            ),
            content,
        )
        return cell[0]

    def delete(self, index: int) -> str:
        u, _, _ = self.cells.pop(index)
        self._send(
            types.NotebookDocumentCellChangeStructure(
                types.NotebookCellArrayChange(index, 1, []), did_close=[types.TextDocumentIdentifier(u)]
            )
        )
        return u

    def move(self, source: int, target: int, reopen: bool = False) -> None:
        """Move a cell; `reopen`: the move also closes and reopens the cell's document."""
        cell = self.cells.pop(source)
        self.cells.insert(target, cell)
        lo, hi = min(source, target), max(source, target)
        structure = types.NotebookDocumentCellChangeStructure(
            types.NotebookCellArrayChange(lo, hi - lo + 1, self._cells(self.cells[lo : hi + 1])),
            did_open=[self._item(cell)] if reopen else None,
            did_close=[types.TextDocumentIdentifier(cell[0])] if reopen else None,
        )
        self._send(structure)

    def code(self) -> list[str]:
        return [u for u, kind, _ in self.cells if kind == "code"]

    async def settled(self) -> dict[str, list[types.Diagnostic]]:
        """Wait until the server's findings of each code cell equal those of this text opened afresh."""
        fresh = Notebook(
            self.s, self.project, [(k, t) for _, k, t in self.cells], name=f"{self.name}-fresh{self.version}"
        )
        expected = [_key(await self.s.diagnostics(u, lambda d: True)) for u in fresh.code()]
        self.s.client.notebook_document_did_close(
            types.DidCloseNotebookDocumentParams(
                types.NotebookDocumentIdentifier(fresh.uri),
                [types.TextDocumentIdentifier(u) for u, _, _ in fresh.cells],
            )
        )
        out = {}
        for u, want in zip(self.code(), expected):
            out[u] = await self.s.diagnostics(u, lambda d, want=want: _key(d) == want, timeout=60)
        return out


@pytest.mark.asyncio
async def test_notebook_cells_stay_identical_through_typing_inserts_pastes_moves_and_deletes(project):
    async with session(project) as s:
        nb = Notebook(s, project, [("code", SETUP), ("markdown", "# Train"), ("code", LOOP)])
        loop = nb.cells[2][0]
        (d,) = (await nb.settled())[loop]
        assert d.code == "TL101"
        nb.type_at_end(2, 0, "  # ok")  # every finding of the cell vanished here with pygls' Full sync
        (d,) = (await nb.settled())[loop]
        assert (d.code, d.range.start.line) == ("TL101", 0)
        assert await _server_line(s, loop, "TL101") == "for x, y in loader:  # ok"
        nb.insert(1, "print('hi')\n")
        await nb.settled()
        pasted = nb.insert(4, "", paste=LOOP.replace("x, y", "a, b"))  # a new cell, pasted into at once
        found = await nb.settled()
        assert [x.code for x in found[pasted]] == ["TL101"]
        assert await _server_line(s, pasted, "TL101") == "for a, b in loader:"
        nb.move(3, 1)  # the first loop moves above print('hi')
        await nb.settled()
        nb.move(1, 3, reopen=True)  # and back, its document closed and opened again in the same change
        found = await nb.settled()
        assert await _server_line(s, loop, "TL101") == "for x, y in loader:  # ok"
        gone = nb.delete(4)
        await nb.settled()
        assert list(s.client.diagnostics[gone]) == []
        nb.delete(0)  # the setup cell: without a model and optimizer the loop is no finding
        assert (await nb.settled())[loop] == []


@pytest.mark.asyncio
async def test_a_quick_fix_after_a_paste_lands_in_its_cell(project):
    async with session(project) as s:
        nb = Notebook(s, project, [("code", SETUP), ("code", "print('start')")])
        cell = nb.cells[1][0]
        nb._send(text_content=[nb._content(cell, [ranged((0, 14), (0, 14), "\n" + LOOP)])])
        nb.cells[1] = (cell, "code", "print('start')\n" + LOOP)
        (d,) = (await nb.settled())[cell]
        assert (d.code, d.range.start.line) == ("TL101", 1)  # the loop, not print('start')
        actions = await s.client.text_document_code_action_async(
            types.CodeActionParams(types.TextDocumentIdentifier(cell), d.range, types.CodeActionContext([d]))
        )
        fix = next(a for a in actions if a.is_preferred)
        assert {dc.text_document.uri for dc in fix.edit.document_changes} == {cell}
        nb.replace(1, edits_for(fix.edit, cell))
        assert nb.cells[1][2] == "print('start')\n" + LOOP.replace(
            "for x, y in loader:\n", "for x, y in loader:\n    optimizer.zero_grad()\n"
        )
        assert (await nb.settled())[cell] == []  # fixed, and no TL000


@pytest.mark.asyncio
async def test_typing_through_a_syntax_error_in_a_cell_keeps_the_other_findings(project):
    async with session(project) as s:
        nb = Notebook(s, project, [("code", SETUP), ("code", LOOP)])
        setup, loop = nb.code()
        (before,) = await s.diagnostics(loop, lambda d: len(d) == 1)
        nb.type_at_end(0, 2, "\noops = foo(1,")
        never_closed = "syntax error: '(' was never closed"
        (error,) = await s.diagnostics(setup, lambda d: [x.message for x in d] == [never_closed])
        assert error.code == "TL000"
        assert error.range.start == types.Position(3, len("oops = foo"))
        # the loop cell lost its model and optimizer with the broken cell; its finding stays
        assert [(x.code, x.range) for x in s.client.diagnostics[loop]] == [("TL101", before.range)]
