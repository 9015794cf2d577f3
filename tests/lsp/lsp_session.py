"""Drive the installed `torchlint server` as a subprocess with pytest-lsp's client.

(Not a conftest.py: conftest module names collide across test folders.)
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import sys
from pathlib import Path

from lsprotocol import types
from pygls.uris import from_fs_path
from pytest_lsp import ClientServerConfig

TORCHLINT = shutil.which("torchlint", path=str(Path(sys.executable).parent)) or "torchlint"

BUGGY = """\
import torch
model = torch.nn.Linear(4, 2)
optimizer = torch.optim.Adam(model.parameters())
for x, y in loader:
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
"""
FIXED = BUGGY.replace("for x, y in loader:\n", "for x, y in loader:\n    optimizer.zero_grad()\n")
TENSOR_ATTR = """\
import torch
from torch import nn

class Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = torch.ones(16)
"""

PUSH = types.ClientCapabilities(
    workspace=types.WorkspaceClientCapabilities(
        configuration=True,
        workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True),
        apply_edit=True,
    ),
    window=types.WindowClientCapabilities(work_done_progress=True),
    text_document=types.TextDocumentClientCapabilities(
        publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=True),
    ),
)


def uri(path: Path) -> str:
    return from_fs_path(str(path))


def ranged(start: tuple[int, int], end: tuple[int, int], text: str) -> types.TextDocumentContentChangePartial:
    return types.TextDocumentContentChangePartial(types.Range(types.Position(*start), types.Position(*end)), text)


class Session:
    """A started client plus a log of every publishDiagnostics it received."""

    def __init__(self, client) -> None:
        self.client = client
        self.published: list[types.PublishDiagnosticsParams] = []
        self.versions: dict[str, int] = {}
        self.initialized: types.InitializeResult | None = None
        original = client.protocol.fm.features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

        def record(params):
            self.published.append(params)
            return original(params)

        client.protocol.fm.features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = record

    def open(self, path: Path, text: str, language: str = "python") -> str:
        u = uri(path)
        self.versions[u] = 1
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(types.TextDocumentItem(u, language, 1, text))
        )
        return u

    def change(self, u: str, text: str) -> int:
        self.versions[u] += 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(self.versions[u], u),
                [types.TextDocumentContentChangeWholeDocument(text)],
            )
        )
        return self.versions[u]

    def edit(self, u: str, start: tuple[int, int], end: tuple[int, int], text: str) -> int:
        """A ranged change, as vscode-languageclient sends every keystroke."""
        self.versions[u] += 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(self.versions[u], u), [ranged(start, end, text)]
            )
        )
        return self.versions[u]

    async def diagnostics(self, u: str, predicate=lambda d: True, timeout: float = 30) -> list[types.Diagnostic]:
        """Wait until the latest diagnostics published for `u` satisfy `predicate`."""

        async def wait():
            while True:
                current = self.client.diagnostics.get(u)
                if current is not None and predicate(list(current)):
                    return list(current)
                await self.client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)

        return await asyncio.wait_for(wait(), timeout)


@contextlib.asynccontextmanager
async def session(root: Path, capabilities=PUSH, settings=None, init_options=None, folders=None, command=None):
    """`folders`: {workspace folder: its own `torchlint` settings} (default: `root` alone); `command`: the
    server's command line (default: `torchlint server`)."""
    client = await ClientServerConfig(server_command=command or [TORCHLINT, "server"]).start()
    if settings is not None:
        client.set_configuration(settings, section="torchlint")
    for folder, scoped in (folders or {}).items():
        client.set_configuration(scoped, section="torchlint", scope_uri=uri(folder))
    s = Session(client)
    try:
        s.initialized = await client.initialize_session(
            types.InitializeParams(
                capabilities=capabilities,
                root_uri=uri(root),
                workspace_folders=[types.WorkspaceFolder(uri(f), f.name) for f in (folders or [root])],
                initialization_options=init_options,
            )
        )
        yield s
    finally:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(client.shutdown_session(), 10)
        await client.stop()


KINDS = {"code": types.NotebookCellKind.Code, "markdown": types.NotebookCellKind.Markup}


def notebook_params(project: Path, cells):
    """didOpen params for a notebook of (kind, text) cells, and its notebook and cell URIs."""
    nb_uri = uri(project / "nb.ipynb")
    cell_uris = [f"vscode-notebook-cell:{project}/nb.ipynb#cell{i}" for i in range(len(cells))]
    return (
        nb_uri,
        cell_uris,
        types.DidOpenNotebookDocumentParams(
            types.NotebookDocument(
                nb_uri,
                "jupyter-notebook",
                1,
                [types.NotebookCell(KINDS[kind], cu) for cu, (kind, _) in zip(cell_uris, cells)],
            ),
            [
                types.TextDocumentItem(cu, "python" if kind == "code" else "markdown", 1, text)
                for cu, (kind, text) in zip(cell_uris, cells)
            ],
        ),
    )


def apply(text: str, edits: list[types.TextEdit]) -> str:
    """Apply LSP text edits (UTF-16 positions) the way an editor does."""
    lines = text.split("\n")

    def offset(pos: types.Position) -> int:
        before = sum(len(line) + 1 for line in lines[: pos.line])
        line = lines[pos.line] if pos.line < len(lines) else ""
        units = 0
        for i, ch in enumerate(line):
            if units >= pos.character:
                return before + i
            units += 2 if ord(ch) > 0xFFFF else 1
        return before + len(line)

    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[: offset(e.range.start)] + e.new_text + text[offset(e.range.end) :]
        lines = text.split("\n")
    return text


def edits_for(edit: types.WorkspaceEdit, u: str) -> list[types.TextEdit]:
    if edit.document_changes:
        return [e for dc in edit.document_changes if dc.text_document.uri == u for e in dc.edits]
    return list((edit.changes or {}).get(u, []))


def progress(client, title: str) -> list[list[object]]:
    """The `$/progress` reports of each progress the server began with `title` (begin first)."""
    return [r for r in client.progress_reports.values() if r and getattr(r[0], "title", None) == title]
