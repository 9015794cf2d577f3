"""`torchlint probe` for the editor: run it on a saved script in a child process,
stop it when the user cancels, and turn its observations into diagnostics."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcRequestCancelled

from torchlint.lsp.work_done import WorkDone

SOURCE = "torchlint-probe"
_LEVELS = {"error": types.DiagnosticSeverity.Error, "info": types.DiagnosticSeverity.Information}


async def observations(python: str, path: str, progress: WorkDone, limits: list[str]) -> list[types.Diagnostic]:
    """Probe `path` (this torchlint; the script runs under `python`): what it saw there, as diagnostics."""
    return _diagnostics(await _run(python, path, progress, limits), path)


async def _run(python: str, path: str, progress: WorkDone, limits: list[str]) -> str:
    """Run `torchlint probe` and return the JSON it prints.

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
        raise JsonRpcInvalidParams(f"cannot start the probe: {exc.strerror or exc}") from None
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
        raise JsonRpcInvalidParams("probe not available: this torchlint has no `torchlint probe`")
    if proc.returncode not in (0, 1, 3):  # 3: the script crashed, and the report says where
        lines = [ln for ln in err.splitlines() if ln.startswith("torchlint probe: error")] or err.splitlines()[-5:]
        raise JsonRpcInvalidParams(f"probe failed (exit {proc.returncode}): {' '.join(lines)[-2000:]}")
    return stdout.decode("utf-8", "replace")


async def _stop(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is not None:
        return
    proc.send_signal(signal.SIGINT)
    try:
        await asyncio.wait_for(proc.wait(), 15)
    except asyncio.TimeoutError:
        proc.kill()
        await proc.wait()


def _diagnostics(out: str, path: str) -> list[types.Diagnostic]:
    """The probe's JSON observations that concern `path`, as diagnostics."""
    try:
        data = json.loads(out or "[]")
    except ValueError:
        raise JsonRpcInvalidParams("probe printed something that is not JSON") from None
    items = data.get("observations", []) if isinstance(data, dict) else data
    diags: list[types.Diagnostic] = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict) or "message" not in item:
            continue
        where = item.get("path")
        if where and os.path.abspath(str(where)) != os.path.abspath(path):
            continue
        line = max(int(item.get("line") or 1) - 1, 0)
        col = max(int(item.get("column") or 1) - 1, 0)
        level = _LEVELS.get(str(item.get("severity")), types.DiagnosticSeverity.Warning)
        rng = types.Range(types.Position(line, col), types.Position(line, 10_000))  # the whole line
        message = str(item["message"])
        if item.get("count"):
            message += f" (seen at runtime in {item['count']} step{'s' if item['count'] != 1 else ''})"
        code = item.get("code") or item.get("kind")
        diags.append(types.Diagnostic(rng, message, severity=level, code=code, source=SOURCE))
    return diags
