"""`workspace/executeCommand`: apply all fixes, rule docs, lint the workspace, and
the runtime probe. Long commands report `$/progress` and stop when the request
or the progress is cancelled."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from torchlint.config import ConfigError
from torchlint.lsp import diagnostics, documents, edits, probe_runner
from torchlint.lsp.session import Session
from torchlint.lsp.uris import to_path
from torchlint.lsp.work_done import WorkDone

APPLY_ALL_FIXES = "torchlint.applyAllFixes"
RULE_DOCS = "torchlint.showRuleDocs"
LINT_WORKSPACE = "torchlint.lintWorkspace"
RUN_PROBE = "torchlint.runProbe"
CHUNK = 64  # files per step of a workspace lint: cancellation is checked between steps


def _uri_arg(args: tuple[Any, ...], name: str) -> str:
    value = args[0] if args else None
    if isinstance(value, dict):
        value = value.get("uri")
    if not isinstance(value, str) or not value:
        raise JsonRpcInvalidParams(f"{name} takes the document URI as its argument")
    return value


async def apply_all_fixes(session: Session, *args: Any) -> dict[str, object]:
    """`torchlint.applyAllFixes [uri]`: apply every safe fix of an open document."""
    key = session.owner(_uri_arg(args, APPLY_ALL_FIXES))
    if not session.is_open(key):
        raise JsonRpcInvalidParams(f"{key} is not open")
    changes, applied = await session.fix_all(key)
    if changes:
        result = await session.server.workspace_apply_edit_async(
            types.ApplyWorkspaceEditParams(
                edits.workspace_edit(changes, session.versions(changes)), label="torchlint: fix all"
            )
        )
        if not result.applied:
            return {"applied": 0, "reason": result.failure_reason or "the editor refused the edit"}
    return {"applied": applied}


def show_rule_docs(session: Session, *args: Any) -> dict[str, object]:
    """`torchlint.showRuleDocs [code]`: a rule's documentation as Markdown, or a probe observation
    kind's (the code of a `torchlint-probe` diagnostic)."""
    from torchlint import DOCS_URL
    from torchlint.docs import rule_markdown
    from torchlint.lsp.probe_docs import KIND_DOCS, kind_markdown
    from torchlint.registry import rules

    asked = str(args[0]).strip() if args else ""
    if asked.lower() in KIND_DOCS:
        kind = asked.lower()
        return {"code": kind, "name": kind, "markdown": kind_markdown(kind), "url": probe_runner.KIND_DOCS_URL}
    code = asked.upper()
    cls = rules().get(code)
    if cls is None:
        raise JsonRpcInvalidParams(f"unknown rule {code!r} (see `torchlint rules`)")
    return {"code": code, "name": cls.name, "markdown": rule_markdown(cls), "url": DOCS_URL.format(code=code)}


async def lint_workspace(session: Session, *args: Any) -> dict[str, object]:
    """`torchlint.lintWorkspace [path]`: lint every file of the workspace folders (or of `path`),
    publishing diagnostics for the files that are not open."""
    roots = [to_path(str(f.uri)) for f in session.workspace.folders.values()]
    if not roots and session.workspace.root_path:
        roots = [str(session.workspace.root_path)]
    if args and isinstance(args[0], str):
        roots = [to_path(args[0])]
    roots = [r for r in roots if r and os.path.isdir(r)]
    if not roots:
        raise JsonRpcInvalidParams("no workspace folder to lint")
    from torchlint import checker
    from torchlint.config import ConfigResolver
    from torchlint.registry import known_codes

    resolver = ConfigResolver(known_codes())
    planned: dict[str, checker.Job] = {}
    try:
        for root in sorted(roots, key=len, reverse=True):  # innermost first: a file gets its own folder's settings
            for job in checker.plan([Path(root)], resolver, "check", session.settings.for_path(root).overrides):
                planned.setdefault(job.path, job)
    except (ConfigError, FileNotFoundError) as exc:
        raise JsonRpcInvalidParams(f"cannot lint the workspace: {exc}") from None
    jobs = list(planned.values())
    loop = asyncio.get_running_loop()
    files = findings = 0
    async with WorkDone(session.server, "torchlint: checking the workspace") as progress:
        for start in range(0, len(jobs), CHUNK):
            if progress.cancelled:
                break
            chunk = jobs[start : start + CHUNK]

            def done(i: int, _n: int, base: int = start) -> None:  # called on the worker thread
                n = base + i
                loop.call_soon_threadsafe(progress.report, f"{n}/{len(jobs)} files", 100 * n // max(len(jobs), 1))

            # One worker, in this process: a process pool forked from the server inherits its
            # stdio, the LSP stream, and its threads' locks (a lint workspace of 9+ files hung).
            result = await loop.run_in_executor(None, checker.run, chunk, 1, done)
            published = await loop.run_in_executor(None, diagnostics.from_run, result)
            for uri, diags in published.items():
                if not session.is_open(session.owner(uri)):  # an open document shows its live state
                    session.server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, diags))
            files += len(chunk)
            findings += sum(len(r.findings) for r in result.files)
        cancelled = progress.cancelled
    return {"files": files, "findings": findings, "cancelled": cancelled}


async def run_probe(session: Session, *args: Any) -> dict[str, object]:
    """`torchlint.runProbe [uri]`: run the saved script (or the notebook, given it or one of its cells) under
    the runtime probe and show what it saw, on the lines (cells) it saw it."""
    key = session.owner(_uri_arg(args, RUN_PROBE))
    path = to_path(key)
    if not os.path.isfile(path):
        raise JsonRpcInvalidParams(f"{path}: save the script before probing it")
    settings = session.settings.for_path(path)
    if settings.probe_enabled is False and await session.fetch_settings():
        # the user may have just turned it on: the notification that says so can still be on its way
        session.relint_all()
        settings = session.settings.for_path(path)
    if settings.probe_enabled is False:
        raise JsonRpcInvalidParams(
            "the runtime probe is disabled (torchlint.probe.enabled is off, or the workspace is untrusted)"
        )
    limits = []
    if settings.probe_seconds:
        limits += ["--max-seconds", str(settings.probe_seconds)]
    if settings.probe_steps:
        limits += ["--max-steps", str(settings.probe_steps)]
    python = settings.interpreter or sys.executable
    encoding = str(session.workspace.position_encoding)
    cells = documents.code_cells(session.workspace, key)
    async with WorkDone(session.server, f"torchlint: probing {os.path.basename(path)}") as progress:
        runs = await probe_runner.run(python, path, progress, limits, encoding, key, cells)
    session.probe.update(runs)
    published = session.results.get(key)
    if not session.pull:
        for uri in runs:
            session.show(uri, published.diagnostics.get(uri, []) if published else [])
    statuses = [status for run in runs.values() for status in run.statuses.values()]
    return {
        "observations": sum(len(run.observations) for run in runs.values()),
        **{status: statuses.count(status) for status in ("confirmed", "not-observed", "not-reached")},
    }


# Every command the server executes, by id (the extension's manifest test reads this).
COMMANDS: dict[str, Callable[..., Awaitable[dict[str, object]] | dict[str, object]]] = {
    APPLY_ALL_FIXES: apply_all_fixes,
    RULE_DOCS: show_rule_docs,
    LINT_WORKSPACE: lint_workspace,
    RUN_PROBE: run_probe,
}
