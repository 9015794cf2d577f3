"""`workspace/executeCommand`: lint the workspace, apply all fixes, rule docs,
and the runtime probe. Long commands report `$/progress` and stop when the
request or the progress is cancelled."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import uuid
from pathlib import Path
from urllib.parse import unquote

from lsprotocol import types
from pygls.exceptions import JsonRpcRequestCancelled

from torchlint.config import ConfigError, ConfigResolver
from torchlint.lsp import diagnostics, edits
from torchlint.lsp.documents import text_snapshot
from torchlint.lsp.server import TorchlintServer, invalid
from torchlint.lsp.uris import from_path, to_path

LINT_WORKSPACE = "torchlint.lintWorkspace"
APPLY_FIXES = "torchlint.applyAllFixes"
RULE_DOCS = "torchlint.showRuleDocs"
RUN_PROBE = "torchlint.runProbe"
CHUNK = 64  # files per step of a workspace lint: cancellation is checked between steps
PROBE_SOURCE = "torchlint-probe"


class WorkDone:
    """Server-initiated `$/progress`, when the client supports it; a no-op otherwise."""

    def __init__(self, ls: TorchlintServer, title: str) -> None:
        self.ls, self.title, self.token = ls, title, None
        self.request = ls.protocol.msg_id  # the executeCommand request this work answers

    async def __aenter__(self) -> WorkDone:
        window = self.ls.client_capabilities.window
        if window and window.work_done_progress:
            token = f"torchlint-{uuid.uuid4()}"
            try:
                await self.ls.work_done_progress.create_async(token)
                self.token = token
                begin = types.WorkDoneProgressBegin(self.title, cancellable=True, percentage=0)
                self.ls.work_done_progress.begin(token, begin)
            except Exception:
                self.token = None
        return self

    def report(self, message: str, percentage: int | None = None) -> None:
        if self.token is not None:
            self.ls.work_done_progress.report(
                self.token, types.WorkDoneProgressReport(message=message, percentage=percentage)
            )

    @property
    def cancelled(self) -> bool:
        """The user cancelled the progress, or the client sent $/cancelRequest.

        pygls forgets a request when it is cancelled but does not stop a
        coroutine command that is already running, so we watch for that here.
        """
        fut = self.ls.work_done_progress.tokens.get(self.token) if self.token else None
        if fut is not None and fut.cancelled():
            return True
        return self.request is not None and self.request not in self.ls.protocol._request_futures

    async def __aexit__(self, *exc) -> None:
        if self.token is not None:
            end = types.WorkDoneProgressEnd(message="cancelled" if self.cancelled else "done")
            self.ls.work_done_progress.end(self.token, end)
            self.ls.work_done_progress.tokens.pop(self.token, None)


def _uri_arg(args, name: str) -> str:
    value = args[0] if args else None
    if isinstance(value, dict):
        value = value.get("uri")
    if not isinstance(value, str) or not value:
        raise invalid(f"{name} takes the document URI as its argument")
    return unquote(value)


async def fix_all_changes(ls: TorchlintServer, key: str) -> tuple[dict[str, list[types.TextEdit]], int]:
    snap = ls.snapshot(key) if ls.is_open(key) else None
    if snap is None:
        return {}, 0
    loop = asyncio.get_running_loop()
    changes, applied = await loop.run_in_executor(ls.lint_pool, lambda: edits.fix_all(snap, ls.selection(snap)))
    if ls.generations.get(key) != snap.generation:
        return {}, 0  # edited meanwhile: these edits would land on the wrong text
    return changes, applied


def register(ls: TorchlintServer) -> None:
    @ls.command(APPLY_FIXES)
    async def apply_fixes(*args):
        key = ls.owner(_uri_arg(args, APPLY_FIXES))
        if not ls.is_open(key):
            raise invalid(f"{key} is not open")
        changes, applied = await fix_all_changes(ls, key)
        if changes:
            result = await ls.workspace_apply_edit_async(
                types.ApplyWorkspaceEditParams(
                    edits.workspace_edit(changes, ls.versions(changes)), label="torchlint: fix all"
                )
            )
            if not result.applied:
                return {"applied": 0, "reason": result.failure_reason or "the editor refused the edit"}
        return {"applied": applied}

    @ls.command(RULE_DOCS)
    def rule_docs(*args):
        from torchlint.docs import rule_markdown
        from torchlint.registry import rules

        code = str(args[0]).strip().upper() if args else ""
        cls = rules().get(code)
        if cls is None:
            raise invalid(f"unknown rule {code!r} (see `torchlint rules`)")
        from torchlint import DOCS_URL

        return {"code": code, "name": cls.name, "markdown": rule_markdown(cls), "url": DOCS_URL.format(code=code)}

    @ls.command(LINT_WORKSPACE)
    async def lint_workspace(*args):
        roots = [to_path(f.uri) for f in ls.workspace.folders.values()] or (
            [ls.workspace.root_path] if ls.workspace.root_path else []
        )
        if args and isinstance(args[0], str):
            roots = [to_path(args[0])]
        roots = [r for r in roots if r and os.path.isdir(r)]
        if not roots:
            raise invalid("no workspace folder to lint")
        from torchlint import checker
        from torchlint.registry import known_codes

        c = ls.client
        try:
            jobs = checker.plan([Path(r) for r in roots], ConfigResolver(known_codes()), "check", c.overrides)
        except (ConfigError, FileNotFoundError) as exc:
            raise invalid(f"cannot lint the workspace: {exc}") from None
        loop = asyncio.get_running_loop()
        workers = min(4, os.cpu_count() or 1)
        files = findings = 0
        async with WorkDone(ls, "torchlint: checking the workspace") as progress:
            for start in range(0, len(jobs), CHUNK):
                if progress.cancelled:
                    break
                chunk = jobs[start : start + CHUNK]

                def done(i: int, _n: int, base: int = start) -> None:  # called on the worker thread
                    n = base + i
                    loop.call_soon_threadsafe(progress.report, f"{n}/{len(jobs)} files", 100 * n // max(len(jobs), 1))

                result = await loop.run_in_executor(None, checker.run, chunk, workers if len(chunk) > 8 else 1, done)
                published = await loop.run_in_executor(None, _to_diagnostics, result)
                for uri, diags in published.items():
                    if not ls.is_open(ls.owner(uri)):  # an open document shows its live state
                        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, diags))
                files += len(chunk)
                findings += sum(len(r.findings) for r in result.files)
            cancelled = progress.cancelled
        return {"files": files, "findings": findings, "cancelled": cancelled}

    @ls.command(RUN_PROBE)
    async def run_probe(*args):
        uri = _uri_arg(args, RUN_PROBE)
        path = to_path(uri)
        if not os.path.isfile(path):
            raise invalid(f"{path}: save the script before probing it")
        if ls.client.probe_enabled is False:
            raise invalid(
                "the runtime probe is disabled (torchlint.probe.enabled is off, or the workspace is untrusted)"
            )
        python = ls.client.interpreter or sys.executable
        limits = []
        if ls.client.probe_seconds:
            limits += ["--max-seconds", str(ls.client.probe_seconds)]
        if ls.client.probe_steps:
            limits += ["--max-steps", str(ls.client.probe_steps)]
        async with WorkDone(ls, f"torchlint: probing {os.path.basename(path)}") as progress:
            out = await _probe(python, path, progress, limits)
        diags = _probe_diagnostics(out, path)
        ls.probe[uri] = diags
        published = ls.results.get(ls.owner(uri))
        lint = published.diagnostics.get(uri, []) if published else []
        if not ls.pull:
            ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, [*lint, *diags]))
        return {"observations": len(diags)}


def _to_diagnostics(result) -> dict[str, list[types.Diagnostic]]:
    """Diagnostics per file from a checker RunResult (notebooks are linted when opened, not here)."""
    from torchlint.engine.source import SourceError, decode

    out: dict[str, list[types.Diagnostic]] = {}
    for r in result.files:
        if r.path.endswith(".ipynb"):
            continue
        uri = from_path(r.path)
        out[uri] = []
        if not r.findings:
            continue
        try:
            text = decode(Path(r.path).read_bytes()).text
        except (OSError, SourceError):
            text = ""
        snap = text_snapshot(uri, text, 0, types.PositionEncodingKind.Utf16)
        for f in r.findings:
            placed = diagnostics.to_diagnostic(snap, f, {})  # the run applied the severities
            if placed is not None:
                placed[1].data = None  # no live document to apply fixes to
                out[uri].append(placed[1])
    return out


async def _probe(python: str, path: str, progress: WorkDone, limits: list[str]) -> str:
    """Run `torchlint probe` (this torchlint; the script runs under `python`) and return its JSON.

    On cancellation the probe gets SIGINT, which makes it kill the script's whole
    process tree before exiting; SIGKILL follows if it does not exit promptly.
    """
    try:
        # The server's own import path, so a bundled server (libraries on sys.path, not
        # installed) can run its probe too; never the working directory.
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p and os.path.isdir(p))}
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "torchlint",
            "probe",
            path,
            "--output-format",
            "json",
            "--python",
            python,
            *limits,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=os.path.dirname(path),
            env=env,
        )
    except OSError as exc:
        raise invalid(f"cannot start the probe: {exc.strerror or exc}") from None
    progress.report("running the script under the probe")
    communicate = asyncio.ensure_future(proc.communicate())
    try:
        while not communicate.done():
            if progress.cancelled:
                raise JsonRpcRequestCancelled("probe cancelled; the script was stopped")
            await asyncio.wait({communicate}, timeout=0.2)
    except (asyncio.CancelledError, JsonRpcRequestCancelled):
        await _stop(proc)
        communicate.cancel()
        raise
    stdout, stderr = communicate.result()
    err = stderr.decode("utf-8", "replace")
    if "No module named" in err and "torchlint.probe" in err:
        raise invalid("probe not available: this torchlint has no `torchlint probe`")
    if proc.returncode not in (0, 1):
        lines = [ln for ln in err.splitlines() if ln.startswith("torchlint probe: error")] or err.splitlines()[-5:]
        raise invalid(f"probe failed (exit {proc.returncode}): {' '.join(lines)[-2000:]}")
    return stdout.decode("utf-8", "replace")


async def _stop(proc) -> None:
    if proc.returncode is not None:
        return
    proc.send_signal(signal.SIGINT)
    try:
        await asyncio.wait_for(proc.wait(), 15)
    except asyncio.TimeoutError:
        proc.kill()
        await proc.wait()


def _probe_diagnostics(out: str, path: str) -> list[types.Diagnostic]:
    """The probe's JSON observations that concern `path`, as diagnostics."""
    try:
        data = json.loads(out or "[]")
    except ValueError:
        raise invalid("probe printed something that is not JSON") from None
    items = data.get("observations", []) if isinstance(data, dict) else data
    diags = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict) or "message" not in item:
            continue
        where = item.get("path")
        if where and os.path.abspath(str(where)) != os.path.abspath(path):
            continue
        line = max(int(item.get("line") or 1) - 1, 0)
        col = max(int(item.get("column") or 1) - 1, 0)
        level = {"error": types.DiagnosticSeverity.Error, "info": types.DiagnosticSeverity.Information}.get(
            item.get("severity"), types.DiagnosticSeverity.Warning
        )
        rng = types.Range(types.Position(line, col), types.Position(line, 10_000))  # the whole line
        message = str(item["message"])
        if item.get("count"):
            message += f" (seen at runtime in {item['count']} step{'s' if item['count'] != 1 else ''})"
        code = item.get("code") or item.get("kind")
        diags.append(types.Diagnostic(rng, message, severity=level, code=code, source=PROBE_SOURCE))
    return diags
