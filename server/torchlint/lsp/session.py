"""The language server's state, and the methods that change it.

A Session owns what the server knows beyond pygls' copy of the open documents:
each document's generation and last lint, the lints waiting to run, the
client's settings per workspace folder, the config files read, and the lint
thread. Handlers (lsp/handlers/) call its methods; nothing else edits its state.

Linting runs on one worker thread, never on the event loop. Every edit bumps
the document's generation; a lint started for an older generation is dropped
instead of published, and a debounce delay lets a burst of keystrokes end in a
single lint of the last text.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import logging
import os
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.workspace import Workspace

from torchlint.config import ConfigResolver
from torchlint.lsp import diagnostics, documents, edits, last_good, protocol
from torchlint.lsp.documents import Snapshot
from torchlint.lsp.folders import FolderSettings
from torchlint.lsp.settings import ClientSettings, LintSetup, setup
from torchlint.lsp.uris import to_path
from torchlint.lsp.work_done import WorkDone

if TYPE_CHECKING:
    from torchlint.engine.incremental import ChunkParser
    from torchlint.lsp.probe_runner import ProbeRun

log = logging.getLogger("torchlint.lsp")
_LintOutput = tuple[dict[str, list[types.Diagnostic]], LintSetup | None]  # diagnostics per URI, and the setup

DEBOUNCE = 0.15  # seconds of quiet after an edit before linting
FIX_ALL_TRIES = 3  # computations of a fix-all while the document keeps changing under it
INDEX_STEP = 0.05  # seconds of building a project's import index between two lints
SCAN = "torchlint-scan:"  # engine.project.SCAN_DEPENDENCY (not imported: the server starts without the engine)
CONFIG_NAMES = ("pyproject.toml", "torchlint.toml")
SECTION = "torchlint"  # the client's settings section


@dataclass
class Published:
    generation: int
    diagnostics: dict[str, list[types.Diagnostic]]
    dependencies: frozenset[str] = frozenset()  # other project files (paths) these findings depend on
    waiting: frozenset[str] = frozenset()  # roots of projects whose index was not built yet (answers unknown)


def derived_from(dependencies: frozenset[str], changed: str) -> bool:
    """Findings depend on a changed file: it is one they were derived from, or it lies in a project they
    scanned whole ("torchlint-scan:<root>", engine.project.SCAN_DEPENDENCY: any file there may have
    started or stopped calling what they looked for)."""
    if changed in dependencies:
        return True
    return any(d.startswith(SCAN) and Path(changed).is_relative_to(d[len(SCAN) :]) for d in dependencies)


def is_config(uri: str) -> bool:
    return Path(unquote(uri).split("?")[0]).name in CONFIG_NAMES


def _mtime(path: str) -> float | None:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return None


class Session:
    def __init__(self, server: LanguageServer) -> None:
        self.server = server  # the connection to the client
        self.settings = FolderSettings()
        self.pull = False  # the client pulls diagnostics (textDocument/diagnostic)
        self.results: dict[str, Published] = {}  # the last lint of each open document
        self.probe: dict[str, ProbeRun] = {}  # the last probe run of each file (or notebook cell), by URI
        self.lint_pool = ThreadPoolExecutor(1, thread_name_prefix="torchlint-lint")
        self._resolver: ConfigResolver | None = None
        self._generations: dict[str, int] = {}
        self._counter = itertools.count(1)
        self._pending: dict[str, asyncio.Task[Published | None]] = {}
        self._pending_generation: dict[str, int | None] = {}  # the generation each pending lint was asked for
        self._last_edit: dict[str, float] = {}  # monotonic time of each document's last edit
        self._parser: ChunkParser | None = None  # made on the lint thread at first use
        self._frozen = False  # long-lived objects moved to the GC's permanent generation
        self._shown: set[str] = set()  # messages already shown once
        self._config_mtimes: dict[str, float | None] = {}  # config files read, and their mtime then
        self._good: dict[str, last_good.Lint] = {}  # each open document's (cell's) last lint that parsed
        self._analysing = False  # the first lint has started (and its progress with it)
        self._indexing: set[str] = set()  # project roots whose import index is being built (lint thread only)
        self._indexed: set[str] = set()  # project roots whose import index is built

    # --- documents ------------------------------------------------------------------

    @property
    def workspace(self) -> Workspace:
        return self.server.workspace

    def owner(self, uri: str) -> str:
        """The key a document is linted under: its notebook for a cell, else itself."""
        return documents.owner(self.workspace, uri)

    def is_open(self, key: str) -> bool:
        return documents.is_open(self.workspace, key)

    def generation(self, key: str) -> int | None:
        """The document's current generation (None if it has none yet)."""
        return self._generations.get(key)

    def touch(self, key: str) -> int:
        """A new generation for `key`: its text changed, or must be linted afresh."""
        self._generations[key] = gen = next(self._counter)
        return gen

    def snapshot(self, key: str) -> Snapshot | None:
        return documents.snapshot(self.workspace, key, self.generation(key) or self.touch(key))

    def settings_for(self, key: str) -> ClientSettings:
        return self.settings.for_path(to_path(key))

    def versions(self, uris: Iterable[str]) -> dict[str, int | None] | None:
        """Document versions for version-checked edits, or None if the client wants plain `changes`."""
        caps = self.server.client_capabilities.workspace
        if not (caps and caps.workspace_edit and caps.workspace_edit.document_changes):
            return None
        return {uri: documents.version(self.workspace, uri) for uri in uris}

    def opened(self, key: str) -> None:
        self.touch(key)
        self._overlay(key)
        if not self.pull:
            self.schedule(key, 0)

    def edited(self, key: str) -> None:
        self.touch(key)
        self.results.pop(key, None)
        self._overlay(key)
        for uri in (documents.code_cells(self.workspace, key) or {0: key}).values():
            run = self.probe.get(uri)
            text = documents.source(self.workspace, uri) if run is not None else None
            if run is not None and text is not None:
                run.follow(text)  # its observations and statuses stay with their lines
        if self.settings_for(key).run == "onType" and not self.pull:
            self.schedule(key, DEBOUNCE)
            self.relint_dependents(to_path(key))

    def _overlay(self, key: str, closed: bool = False) -> None:
        """The project index reads an open module's editor text, not the file on disk.

        Queued on the lint thread (where the engine, libcst and the index live), so it is
        ordered with the lints and the server still starts without loading them.
        """
        path = to_path(key)
        text = None if closed else documents.source(self.workspace, key)
        if not path.endswith(".py") or (text is None and not closed):
            return

        def update() -> None:
            from torchlint.engine.semantic.project import project_for

            project = project_for(path)
            if project is not None:
                project.set_overlay(Path(path).resolve(), text)

        self.lint_pool.submit(update)

    def relint_dependents(self, path: str) -> None:
        """Re-lint the open documents whose findings were derived from `path` (a base class, a factory)."""
        changed = str(Path(path).resolve())
        for key, published in list(self.results.items()):
            if derived_from(published.dependencies, changed):
                self.relint(key)

    def files_changed(self, paths: Iterable[str]) -> None:
        """Python files or notebooks changed on disk (created, saved elsewhere, deleted): the index
        reads them anew."""
        paths = list(paths)

        def forget() -> None:
            from torchlint.engine.semantic.project import forget_files

            forget_files(paths)

        if paths:
            self.lint_pool.submit(forget)
        for path in paths:
            if path.endswith((".py", ".ipynb")):
                self.relint_dependents(path)

    def saved(self, key: str) -> None:
        if not self.pull and self.is_open(key) and key not in self.results:
            self.schedule(key, 0)

    def closed(self, key: str, uris: Iterable[str]) -> None:
        """`key` was closed, with the documents (cells) in `uris`: forget it and clear what it showed."""
        task = self._pending.pop(key, None)
        if task is not None:
            task.cancel()
        self._generations.pop(key, None)
        self._overlay(key, closed=True)
        for uri in uris:
            self._good.pop(uri, None)
        published = self.results.pop(key, None)
        self.clear({*uris, *(published.diagnostics if published else ())})

    # --- linting ---------------------------------------------------------------------

    @property
    def resolver(self) -> ConfigResolver:
        if self._resolver is None:
            from torchlint.registry import known_codes  # loads the rules (and libcst): not at startup

            self._resolver = ConfigResolver(known_codes())
        return self._resolver

    def warm_up(self) -> None:
        """Load the engine and rules on the lint thread while the client finishes starting."""

        def load() -> None:
            from torchlint.engine.semantic.project import Project

            # Whole-project questions answer "unknown" until the project's import index is built in
            # the background (index_project): a file's own findings never wait for the project.
            Project.waits_for_index = False
            _ = self.resolver  # loads the rules and libcst

        self.lint_pool.submit(load)

    def index_project(self, path: str) -> None:
        """Build the import index of `path`'s project on the lint thread, a step at a time between lints;
        when it is ready, the open documents whose findings waited for it are linted again."""
        loop = asyncio.get_running_loop()

        def start() -> None:
            from torchlint.engine.semantic.project import project_for

            project = project_for(path)
            if project is not None:
                self._build_index(str(project.root), loop)

        self._submit(start)

    def index_workspace(self) -> None:
        """Start building each workspace folder's project index at start-up, before a request needs it."""
        folders = [to_path(str(f.uri)) for f in self.workspace.folders.values()]
        if not folders and self.workspace.root_path:
            folders = [str(self.workspace.root_path)]
        for folder in folders:
            if os.path.isdir(folder):
                self.index_project(os.path.join(folder, "__init__.py"))  # any file of the folder names its project

    def _build_index(self, root: str, loop: asyncio.AbstractEventLoop) -> bool:
        """(Lint thread.) Start building `root`'s index unless it is built or being built; False if built."""
        from torchlint.engine.semantic.project import project_at

        project = project_at(Path(root))
        if project.index_ready:
            return False
        if root in self._indexing:
            return True
        self._indexing.add(root)

        def step() -> None:
            if project.build_index(INDEX_STEP):
                self._indexing.discard(root)
                gc.freeze()  # the index lives as long as the server: out of the collector's rescans
                loop.call_soon_threadsafe(self.index_built, root)
            else:
                self._submit(step)  # behind the lints that arrived meanwhile

        self._submit(step)
        return True

    def _submit(self, work: Callable[[], None]) -> None:
        try:
            self.lint_pool.submit(work)
        except RuntimeError:  # shut down
            pass

    def index_built(self, root: str) -> None:
        """`root`'s index is ready: lint again the documents whose findings waited for it."""
        self._indexed.add(root)
        waited = [key for key, published in self.results.items() if root in published.waiting]
        for key in waited:
            self.relint(key)
        if waited and self.pull:
            self.refresh_pull()

    def relint(self, key: str) -> None:
        self.results.pop(key, None)
        self.touch(key)
        if not self.pull:
            self.schedule(key, DEBOUNCE)

    def setup(self, snap: Snapshot) -> LintSetup:
        return setup(self.resolver, self.settings_for(snap.key), snap.path)

    def _lint_sync(
        self, snap: Snapshot, dependencies: set[str], waiting: set[str], loop: asyncio.AbstractEventLoop
    ) -> _LintOutput:
        if not self.settings_for(snap.key).enable:
            return {p.uri: [] for p in snap.parts}, None
        lint_setup = self.setup(snap)
        if self._parser is None:
            from torchlint.engine.incremental import ChunkParser  # libcst loads on the lint thread

            self._parser = ChunkParser()
        result = self._through_syntax_errors(snap, diagnostics.lint(snap, lint_setup, self._parser, dependencies))
        for dependency in dependencies:  # answers that waited for a project's index: build it (once)
            if dependency.startswith(SCAN) and self._build_index(dependency[len(SCAN) :], loop):
                waiting.add(dependency[len(SCAN) :])
        if not self._frozen:
            # Everything loaded by now (lsprotocol's thousands of types, libcst, the rules) lives
            # as long as the server: move it out of the cyclic GC's way, once, so full
            # collections stop re-scanning it on every keystroke.
            from torchlint.checker import tune_gc

            gc.collect()
            tune_gc()
            self._frozen = True
        return result, lint_setup

    def _through_syntax_errors(
        self, snap: Snapshot, result: dict[str, list[types.Diagnostic]]
    ) -> dict[str, list[types.Diagnostic]]:
        """While `snap` does not parse, its last good findings stay on unchanged lines (lsp/last_good.py);
        the parse error shows unless `showSyntaxErrors` is off."""
        if not last_good.broken(result):
            self._good.update({p.uri: last_good.Lint(p.text, result.get(p.uri, [])) for p in snap.parts})
            return result
        out = {}
        for p in snap.parts:
            fresh = result.get(p.uri, [])
            if not self.settings_for(snap.key).show_syntax_errors:
                fresh = [d for d in fresh if d.code != last_good.PARSE_ERROR]
            last = self._good.get(p.uri)
            out[p.uri] = fresh if last is None else last_good.carried(last, p.text, fresh, snap.generation)
        return out

    def schedule(self, key: str, delay: float = DEBOUNCE) -> asyncio.Task[Published | None]:
        """Lint `key` after `delay`; replaces any lint still waiting for the same document.

        Leading-edge debounce: the first edit after a quiet spell is linted at once
        (diagnostics follow a single keystroke without waiting); edits that arrive
        while a lint is pending or within `delay` of the previous one wait `delay`.
        """
        old = self._pending.pop(key, None)
        if delay:
            now = time.monotonic()
            busy = old is not None and not old.done()
            if not busy and now - self._last_edit.get(key, float("-inf")) >= delay:
                delay = 0
            self._last_edit[key] = now
        if old is not None and not old.done():
            old.cancel()
        task = asyncio.ensure_future(self._lint_later(key, delay))
        self._pending[key] = task
        self._pending_generation[key] = self.generation(key)
        return task

    async def current(self, key: str) -> Published | None:
        """The lint of `key`'s current generation: the last one, a pending one, or a new one."""
        generation = self.generation(key) or self.touch(key)
        published = self.results.get(key)
        if published is None or published.generation != generation:
            task = self._pending.get(key)
            if task is None or task.done() or self._pending_generation.get(key) != generation:
                task = self.schedule(key, 0)
            published = await asyncio.shield(task)  # one lint serves every cell's pull; a cancelled pull keeps it
        return published if published is not None and self.generation(key) == published.generation else None

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
        if self.lost(snap):  # never lint text that is not the editor's: show nothing instead
            published = Published(snap.generation, {p.uri: [] for p in snap.parts})
            self.results[key] = published
            if not self.pull:
                self.publish(key, published)
            return published
        if len(snap.text) > diagnostics.MAX_CHARS:
            self.log_once(
                f"{snap.path}: not linted: larger than {diagnostics.MAX_CHARS} characters", types.MessageType.Info
            )
        loop = asyncio.get_running_loop()
        dependencies: set[str] = set()
        waiting: set[str] = set()
        try:
            running = loop.run_in_executor(self.lint_pool, self._lint_sync, snap, dependencies, waiting, loop)
            if self._analysing:
                result, lint_setup = await running
            else:
                result, lint_setup = await self._first_lint(running)
        except Exception as exc:  # a bug in a rule or the engine: report it, keep serving
            log.exception("lint failed for %s", key)
            self.log_once(f"torchlint failed on {snap.path}: {type(exc).__name__}: {exc}", types.MessageType.Error)
            return None
        if self.generation(key) != snap.generation or not self.is_open(key):
            return None  # the document changed (or closed) meanwhile: never publish stale results
        if lint_setup is not None and lint_setup.config_error:
            self.show_once(f"torchlint: {lint_setup.config_error}", types.MessageType.Error)
        if lint_setup is not None and lint_setup.source and lint_setup.source not in self._config_mtimes:
            self._config_mtimes[lint_setup.source] = _mtime(lint_setup.source)
        published = Published(snap.generation, result, frozenset(dependencies), frozenset(waiting))
        self.results[key] = published
        if not self.pull:
            self.publish(key, published)
        if published.waiting & self._indexed:  # the index was built while this lint waited to be published
            self.relint(key)
        return published

    async def _first_lint(self, running: asyncio.Future[_LintOutput]) -> _LintOutput:
        """The first lint loads the engine and the rules and reads the project: seconds on a loaded
        machine, with nothing in the editor meanwhile, so it shows `$/progress` "analysing" (the lint
        runs while the client creates the progress bar)."""
        self._analysing = True
        try:
            async with WorkDone(self.server, "torchlint: analysing", cancellable=False) as progress:
                progress.report("loading the rules and reading the project")
                return await running
        except asyncio.CancelledError:
            self._analysing = False  # an edit replaced this lint: the next one (queued behind it) shows it
            raise

    def lost(self, snap: Snapshot) -> bool:
        """Whether an edit to a part of `snap` did not fit the server's text (logged once, for the user)."""
        parts = [p.uri for p in snap.parts if protocol.lost(self.server, p.uri)]
        if parts:
            self.log_once(
                f"torchlint: an edit to {parts[0]} did not fit the server's copy of its text; "
                "it is not linted until it is closed and reopened",
                types.MessageType.Warning,
            )
        return bool(parts)

    def _fix_all_sync(self, snap: Snapshot, cell: str | None) -> tuple[dict[str, list[types.TextEdit]], int]:
        return edits.fix_all(snap, self.setup(snap), cell)

    async def fix_all(self, key: str, cell: str | None = None) -> tuple[dict[str, list[types.TextEdit]], int]:
        """Every safe fix of the open document (or notebook) `key`, or of its one `cell`, and how many,
        computed on its text of the moment. Edited meanwhile, the edits would land on the wrong text: they
        are computed again on the new one (on save VS Code applies one cell's fixes while it asks for the
        next cell's), until the text holds still for one computation."""
        loop = asyncio.get_running_loop()
        for _ in range(FIX_ALL_TRIES):
            snap = self.snapshot(key) if self.is_open(key) else None
            if snap is None or self.lost(snap):
                return {}, 0
            changes, applied = await loop.run_in_executor(self.lint_pool, self._fix_all_sync, snap, cell)
            if self.generation(key) == snap.generation:
                return changes, applied
        return {}, 0  # edited all along: no edit is better than one on the wrong text

    # --- publishing ---------------------------------------------------------------------

    def publish(self, key: str, published: Published) -> None:
        for uri, diags in published.diagnostics.items():
            version = documents.version(self.workspace, uri) if uri == key else None
            self.show(uri, diags, version)

    def show(self, uri: str, lint: list[types.Diagnostic], version: int | None = None) -> None:
        """Push `uri`'s lint diagnostics, with what the probe saw of it."""
        diags = self.with_probe(uri, lint)
        self.server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, diags, version))

    def with_probe(self, uri: str, lint: list[types.Diagnostic]) -> list[types.Diagnostic]:
        """`uri`'s lint diagnostics marked as the last probe run judged them, and its observations."""
        run = self.probe.get(uri)
        return run.with_lint(lint) if run else lint

    def clear(self, uris: Iterable[str]) -> None:
        if self.pull:
            return
        for uri in uris:
            self.server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, []))

    def relint_all(self) -> None:
        self.results.clear()
        keys = {self.owner(doc.uri) for doc in list(self.workspace.text_documents.values())}
        if self.pull:
            self.refresh_pull()
            return
        for key in keys:
            self.touch(key)
            self.schedule(key, 0)

    def refresh_pull(self) -> None:
        """Ask a client that pulls diagnostics to pull them again (if it can be asked)."""
        caps = self.server.client_capabilities.workspace
        if caps and caps.diagnostics and caps.diagnostics.refresh_support:
            self.server.workspace_diagnostic_refresh(None)

    def show_once(self, message: str, kind: types.MessageType = types.MessageType.Warning) -> None:
        if message not in self._shown:
            self._shown.add(message)
            self.server.window_show_message(types.ShowMessageParams(kind, message))

    def log_once(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        if message not in self._shown:
            self._shown.add(message)
            self.server.window_log_message(types.LogMessageParams(kind, message))

    # --- configuration ---------------------------------------------------------------------

    def _parsed(self, value: object) -> ClientSettings:
        settings, errors = ClientSettings.parse(value)
        for e in errors:
            self.show_once(f"torchlint settings: {e}")
        return settings

    def apply_settings(self, value: object) -> None:
        """Settings the client sent unasked: the global ones, for every folder not asked about."""
        self.settings.replace(self._parsed(value), {})

    async def fetch_settings(self) -> bool:
        """Ask the client for its settings, global and per workspace folder; True if any changed."""
        caps = self.server.client_capabilities.workspace
        if not (caps and caps.configuration):
            return False
        folders = [str(folder.uri) for folder in self.workspace.folders.values()]
        items = [types.ConfigurationItem(section=SECTION)]
        items += [types.ConfigurationItem(scope_uri=uri, section=SECTION) for uri in folders]
        try:
            result = await self.server.workspace_configuration_async(types.ConfigurationParams(items))
        except Exception as exc:
            log.warning("workspace/configuration failed: %s", exc)
            return False
        default = self.settings.default if not result or result[0] is None else self._parsed(result[0])
        per_folder = {to_path(uri): self._parsed(value) for uri, value in zip(folders, result[1:]) if value is not None}
        return self.settings.replace(default, per_folder)

    def config_changed(self) -> bool:
        """A config file we read has changed on disk (for clients that do not watch files)."""
        return any(_mtime(path) != seen for path, seen in self._config_mtimes.items())

    def reload_config(self) -> None:
        def forget() -> None:
            from torchlint.engine.semantic.project import forget_files

            forget_files()  # a config may set torch-version

        self.lint_pool.submit(forget)
        self._config_mtimes.clear()
        self._resolver = None
        self._shown = {m for m in self._shown if not m.startswith("torchlint: ")}
        self.relint_all()

    def watch_config_files(self) -> None:
        caps = self.server.client_capabilities.workspace
        if not (caps and caps.did_change_watched_files and caps.did_change_watched_files.dynamic_registration):
            return
        # config files, Python files and notebooks: the project index must see them change on disk too
        watchers = [types.FileSystemWatcher(glob_pattern=f"**/{name}") for name in (*CONFIG_NAMES, "*.py", "*.ipynb")]
        registration = types.Registration(
            "torchlint-config-watch",
            types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            types.DidChangeWatchedFilesRegistrationOptions(watchers),
        )
        self.server.client_register_capability(types.RegistrationParams([registration]))

    def shutdown(self) -> None:
        for task in self._pending.values():
            task.cancel()
        self.lint_pool.shutdown(wait=False, cancel_futures=True)
