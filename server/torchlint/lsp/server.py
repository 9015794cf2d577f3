"""The language server: document state, scheduling, and the LSP features.

Linting runs on one worker thread, never on the event loop. Every edit bumps
the document's generation; a lint started for an older generation is dropped
instead of published, and a debounce delay lets a burst of keystrokes end in
a single lint of the last text.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import logging
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcRequestCancelled
from pygls.lsp.server import LanguageServer

from torchlint import __version__
from torchlint.config import ConfigResolver
from torchlint.lsp import diagnostics
from torchlint.lsp.documents import Snapshot, notebook_snapshot, text_snapshot
from torchlint.lsp.protocol import Protocol
from torchlint.lsp.settings import ClientSettings, Selection, select

log = logging.getLogger("torchlint.lsp")

DEBOUNCE = 0.15  # seconds of quiet after an edit before linting
CONFIG_NAMES = ("pyproject.toml", "torchlint.toml")
FIX_ALL = f"{types.CodeActionKind.SourceFixAll.value}.torchlint"
SERVER_CANCELLED = -32802


@dataclass
class Published:
    generation: int
    diagnostics: dict[str, list[types.Diagnostic]]


class TorchlintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "torchlint",
            __version__,
            protocol_cls=Protocol,
            text_document_sync_kind=types.TextDocumentSyncKind.Full,
            notebook_document_sync=types.NotebookDocumentSyncOptions(
                notebook_selector=[
                    types.NotebookDocumentFilterWithCells(
                        cells=[types.NotebookCellLanguage(language="python")], notebook=kind
                    )
                    for kind in ("jupyter-notebook", "interactive")
                ],
                save=True,
            ),
        )
        self.client = ClientSettings()
        self._resolver: ConfigResolver | None = None
        self.lint_pool = ThreadPoolExecutor(1, thread_name_prefix="torchlint-lint")
        self.generations: dict[str, int] = {}
        self._counter = itertools.count(1)
        self.pending: dict[str, asyncio.Task] = {}
        self.last_edit: dict[str, float] = {}  # monotonic time of each document's last edit
        self.parser = None  # an incremental.ChunkParser, made on the lint thread at first use
        self.frozen = False  # long-lived objects moved to the GC's permanent generation
        self.pending_generation: dict[str, int | None] = {}  # the generation each pending lint was asked for
        self.results: dict[str, Published] = {}
        self.pull = False  # the client pulls diagnostics (textDocument/diagnostic)
        self.shown: set[str] = set()  # error messages already shown once
        self.config_mtimes: dict[str, float | None] = {}  # config files read, and their mtime then
        self.probe: dict[str, list[types.Diagnostic]] = {}  # the last probe run's observations per URI

    # --- documents --------------------------------------------------------

    def owner(self, uri: str) -> str:
        """The key a document is linted under: its notebook for a cell, else itself."""
        nb = self.workspace.get_notebook_document(cell_uri=uri)
        return unquote(nb.uri) if nb is not None else unquote(uri)

    def is_open(self, key: str) -> bool:
        return (
            key in self.workspace.text_documents or self.workspace.get_notebook_document(notebook_uri=key) is not None
        )

    def touch(self, key: str) -> int:
        self.generations[key] = gen = next(self._counter)
        return gen

    def snapshot(self, key: str) -> Snapshot | None:
        encoding = self.workspace.position_encoding or types.PositionEncodingKind.Utf16
        gen = self.generations.get(key) or self.touch(key)
        nb = self.workspace.get_notebook_document(notebook_uri=key)
        if nb is not None:
            cells = []
            for cell in nb.cells:
                doc = self.workspace.text_documents.get(unquote(cell.document))
                code = (
                    cell.kind == types.NotebookCellKind.Code and doc is not None and doc.language_id in (None, "python")
                )
                cells.append((unquote(cell.document), doc.source if doc is not None else "", code))
            return notebook_snapshot(key, cells, gen, encoding)
        doc = self.workspace.text_documents.get(key)
        if doc is None:
            return None
        return text_snapshot(key, doc.source, gen, encoding)

    def versions(self, uris) -> dict[str, int | None] | None:
        """Document versions for version-checked edits, or None if the client wants plain `changes`."""
        caps = self.client_capabilities.workspace
        if not (caps and caps.workspace_edit and caps.workspace_edit.document_changes):
            return None
        out = {}
        for uri in uris:
            doc = self.workspace.text_documents.get(unquote(uri))
            out[uri] = doc.version if doc is not None else None
        return out

    # --- linting ------------------------------------------------------------

    @property
    def resolver(self) -> ConfigResolver:
        if self._resolver is None:
            from torchlint.registry import known_codes  # loads the rules (and libcst): not at startup

            self._resolver = ConfigResolver(known_codes())
        return self._resolver

    def warm_up(self) -> None:
        """Load the engine and rules on the lint thread while the client finishes starting."""
        self.lint_pool.submit(lambda: self.resolver)

    def selection(self, snap: Snapshot) -> Selection:
        return select(self.resolver, self.client, snap.path)

    def _lint_sync(self, snap: Snapshot) -> tuple[dict[str, list[types.Diagnostic]], Selection | None]:
        if not self.client.enable:
            return {p.uri: [] for p in snap.parts}, None
        sel = self.selection(snap)
        if self.parser is None:
            from torchlint.engine.incremental import ChunkParser  # libcst loads on the lint thread

            self.parser = ChunkParser()
        result = diagnostics.lint(snap, sel, self.parser.parse)
        if not self.frozen:
            # Everything loaded by now (lsprotocol's thousands of types, libcst, the rules) lives
            # as long as the server: move it out of the cyclic GC's way, once, so full
            # collections stop re-scanning it on every keystroke.
            gc.collect()
            gc.freeze()
            self.frozen = True
        return result, sel

    def schedule(self, key: str, delay: float = DEBOUNCE) -> asyncio.Task:
        """Lint `key` after `delay`; replaces any lint still waiting for the same document.

        Leading-edge debounce: the first edit after a quiet spell is linted at once
        (diagnostics follow a single keystroke without waiting); edits that arrive
        while a lint is pending or within `delay` of the previous one wait `delay`.
        """
        old = self.pending.pop(key, None)
        if delay:
            now = time.monotonic()
            busy = old is not None and not old.done()
            if not busy and now - self.last_edit.get(key, float("-inf")) >= delay:
                delay = 0
            self.last_edit[key] = now
        if old is not None and not old.done():
            old.cancel()
        task = asyncio.ensure_future(self._lint_later(key, delay))
        self.pending[key] = task
        self.pending_generation[key] = self.generations.get(key)
        return task

    async def _lint_later(self, key: str, delay: float) -> Published | None:
        if delay:
            await asyncio.sleep(delay)
        if self.config_changed():
            self.reload_config()  # re-schedules every open document, this one included
            return None
        snap = self.snapshot(key)
        if snap is None:
            return None
        cached = self.results.get(key)
        if cached is not None and cached.generation == snap.generation:
            return cached
        if len(snap.text) > diagnostics.MAX_CHARS:
            self.log_once(
                f"{snap.path}: not linted: larger than {diagnostics.MAX_CHARS} characters", types.MessageType.Info
            )
        loop = asyncio.get_running_loop()
        try:
            result, sel = await loop.run_in_executor(self.lint_pool, self._lint_sync, snap)
        except Exception as exc:  # a bug in a rule or the engine: report it, keep serving
            log.exception("lint failed for %s", key)
            self.log_once(f"torchlint failed on {snap.path}: {type(exc).__name__}: {exc}", types.MessageType.Error)
            return None
        if self.generations.get(key) != snap.generation or not self.is_open(key):
            return None  # the document changed (or closed) meanwhile: never publish stale results
        if sel is not None and sel.config_error:
            self.show_once(f"torchlint: {sel.config_error}", types.MessageType.Error)
        if sel is not None and sel.source and sel.source not in self.config_mtimes:
            self.config_mtimes[sel.source] = _mtime(sel.source)
        published = Published(snap.generation, result)
        self.results[key] = published
        if not self.pull:
            self.publish(key, published)
        return published

    def publish(self, key: str, published: Published) -> None:
        for uri, diags in published.diagnostics.items():
            doc = self.workspace.text_documents.get(uri)
            version = doc.version if doc is not None and uri == key else None
            diags = [*diags, *self.probe.get(uri, [])]
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, diags, version))

    def clear(self, uris) -> None:
        if self.pull:
            return
        for uri in uris:
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, []))

    def relint_all(self) -> None:
        self.results.clear()
        keys = {self.owner(uri) for uri in list(self.workspace.text_documents)}
        if self.pull:
            caps = self.client_capabilities.workspace
            if caps and caps.diagnostics and caps.diagnostics.refresh_support:
                self.workspace_diagnostic_refresh(None)
            return
        for key in keys:
            self.touch(key)
            self.schedule(key, 0)

    def show_once(self, message: str, kind=types.MessageType.Warning) -> None:
        if message not in self.shown:
            self.shown.add(message)
            self.window_show_message(types.ShowMessageParams(kind, message))

    def log_once(self, message: str, kind=types.MessageType.Info) -> None:
        if message not in self.shown:
            self.shown.add(message)
            self.window_log_message(types.LogMessageParams(kind, message))

    def report_server_error(self, error, source) -> None:
        """Log instead of popping up: the user cannot act on a protocol hiccup."""
        if isinstance(error, JsonRpcRequestCancelled):
            return  # the user asked for it
        log.error("%s: %s", getattr(source, "__name__", source), error)
        try:
            self.window_log_message(types.LogMessageParams(types.MessageType.Error, f"torchlint server: {error}"))
        except Exception:
            pass

    # --- configuration --------------------------------------------------------

    def apply_client_settings(self, value) -> None:
        self.client, errors = ClientSettings.parse(value)
        for e in errors:
            self.show_once(f"torchlint settings: {e}")

    async def fetch_client_settings(self) -> None:
        caps = self.client_capabilities.workspace
        if not (caps and caps.configuration):
            return
        try:
            scope = self.workspace.root_uri
            result = await self.workspace_configuration_async(
                types.ConfigurationParams([types.ConfigurationItem(scope_uri=scope, section="torchlint")])
            )
        except Exception as exc:
            log.warning("workspace/configuration failed: %s", exc)
            return
        if result and result[0] is not None:
            self.apply_client_settings(result[0])

    def config_changed(self) -> bool:
        """A config file we read has changed on disk (for clients that do not watch files)."""
        return any(_mtime(path) != seen for path, seen in self.config_mtimes.items())

    def reload_config(self) -> None:
        self.config_mtimes.clear()
        self._resolver = None
        self.shown = {m for m in self.shown if not m.startswith("torchlint: ")}
        self.relint_all()

    def register_watchers(self) -> None:
        caps = self.client_capabilities.workspace
        if not (caps and caps.did_change_watched_files and caps.did_change_watched_files.dynamic_registration):
            return
        watchers = [types.FileSystemWatcher(glob_pattern=f"**/{name}") for name in CONFIG_NAMES]
        self.client_register_capability(
            types.RegistrationParams(
                [
                    types.Registration(
                        "torchlint-config-watch",
                        types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                        types.DidChangeWatchedFilesRegistrationOptions(watchers),
                    )
                ]
            )
        )

    def lint_on_change(self) -> bool:
        return self.client.run == "onType"


def _mtime(path: str) -> float | None:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return None


def is_config(uri: str) -> bool:
    return Path(unquote(uri).split("?")[0]).name in CONFIG_NAMES


def create() -> TorchlintServer:
    """A server with every feature registered (a fresh one per call, for tests)."""
    from torchlint.lsp import features

    server = TorchlintServer()
    features.register(server)
    return server


def cancelled(message: str) -> JsonRpcException:
    return JsonRpcException(message, SERVER_CANCELLED, {"retriggerRequest": True})


def invalid(message: str) -> JsonRpcInvalidParams:
    return JsonRpcInvalidParams(message)
