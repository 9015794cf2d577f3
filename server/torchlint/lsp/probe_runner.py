"""`torchlint probe` for the editor: run it on a saved script or notebook in a child process,
stop it when the user cancels, and turn its report into what the editor shows: each
observation a diagnostic at its expression (its code the observation kind, linked to
that kind's docs), and each static finding the probe can observe marked confirmed,
not observed or not reached."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import tokenize
from collections.abc import Callable
from dataclasses import dataclass, field
from io import StringIO

import attrs
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcRequestCancelled

from torchlint import DOCS_URL
from torchlint.lsp.coordinates import LineIndex, line_map, moved_range
from torchlint.lsp.work_done import WorkDone

SOURCE = "torchlint-probe"
# What the probe observes, kind by kind (editors without in-editor docs open this page).
KIND_DOCS_URL = DOCS_URL.replace("rules/{code}.md", "probe.md#what-it-observes")
_LEVELS = {"error": types.DiagnosticSeverity.Error, "info": types.DiagnosticSeverity.Information}
_STATUS_WORDS = {
    "confirmed": "confirmed by the runtime probe",
    "not-observed": "not observed by the runtime probe (its lines ran)",
    "not-reached": "not reached by the runtime probe (its lines did not run)",
    "not-applicable": "not applicable: the probe ran without a GPU and without simulated CUDA",
}


@dataclass
class ProbeRun:
    """What the last probe run of one file showed: its observations, and the status of each
    static finding it could observe, by (code, 0-based line of the finding's start)."""

    observations: list[types.Diagnostic] = field(default_factory=list)
    statuses: dict[tuple[str, int], str] = field(default_factory=dict)
    text: str = ""  # the file's text the lines above are lines of

    def follow(self, text: str) -> None:
        """Move what the run showed to where an edit put its lines (`text`: the document now), so the
        next lint finds its findings' statuses there; what stood on a changed line is dropped: the run
        says nothing about the new text."""
        lines = line_map(self.text, text)
        moved = ((d, moved_range(d.range, lines)) for d in self.observations)
        self.observations = [attrs.evolve(d, range=rng) for d, rng in moved if rng is not None]
        self.statuses = {(code, lines[line]): s for (code, line), s in self.statuses.items() if line in lines}
        self.text = text

    def with_lint(self, lint: list[types.Diagnostic]) -> list[types.Diagnostic]:
        """`lint` with each static finding the run judged marked with its status, then the observations.

        A finding edited off its line since the run is no longer matched: it shows unmarked.
        """
        marked = []
        for d in lint:
            status = self.statuses.get((str(d.code), d.range.start.line))
            marked.append(attrs.evolve(d, message=f"{d.message} [{_STATUS_WORDS[status]}]") if status else d)
        return [*marked, *self.observations]


async def run(
    python: str, path: str, progress: WorkDone, limits: list[str], encoding: str, uri: str, cells: dict[int, str] | None
) -> dict[str, ProbeRun]:
    """Probe `path` (this torchlint; the script runs under `python`): what it saw there, by document URI:
    `uri` for a script, each of `cells` (1-based cell number -> cell URI) for a notebook.

    `encoding`: the LSP position encoding, for the columns of each observation's expression.
    """
    out = await _run(python, path, progress, limits)
    return {uri: _report(out, path, encoding)} if cells is None else notebook_report(out, path, encoding, cells)


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
    failure = _failure(proc.returncode, stderr.decode("utf-8", "replace"), python, bool(stdout.strip()))
    if failure:
        raise JsonRpcInvalidParams(failure)
    return stdout.decode("utf-8", "replace")


def _failure(returncode: int | None, err: str, python: str, reported: bool = False) -> str | None:
    """Why a probe run failed, as the user should read it; None when it ran (its report says the rest:
    a crash, what simulated CUDA lacked, the script's own exit status)."""
    if "cannot import torch in" in err:
        # The script's interpreter lacks torch, and torch is all it needs: the probe runs from this torchlint.
        return f"the probe needs torch in {python}: install it there with `pip install torch`"
    if "No module named" in err and "torchlint.probe" in err:
        return "probe not available: this torchlint has no `torchlint probe`"
    if not reported and returncode not in (0, 1, 3):
        lines = [ln for ln in err.splitlines() if ln.startswith("torchlint probe: error")] or err.splitlines()[-5:]
        return f"probe failed (exit {returncode}): {' '.join(lines)[-2000:]}"
    return None


async def _stop(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is not None:
        return
    proc.send_signal(signal.SIGINT)
    try:
        await asyncio.wait_for(proc.wait(), 15)
    except asyncio.TimeoutError:
        proc.kill()
        await proc.wait()


def _report(out: str, path: str, encoding: str) -> ProbeRun:
    """The probe's JSON report, as far as it concerns `path`."""
    try:
        with open(path, encoding="utf-8-sig") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError):
        text = ""
    here = os.path.abspath(path)
    runs = _runs(out, encoding, lambda where: (path, text) if not where or os.path.abspath(where) == here else None)
    return runs.get(path, ProbeRun(text=text))


def notebook_report(out: str, path: str, encoding: str, cells: dict[int, str]) -> dict[str, ProbeRun]:
    """The report of the notebook at `path` (its items at `nb.ipynb:cell_N`, line in that cell), one run
    per open code cell: `cells`, 1-based cell number -> the cell's document URI. A cell's lines are those
    of its text in the notebook as saved, the text the probe ran."""
    from torchlint.notebook import NotebookError, file_and_cell, read_ipynb

    try:
        with open(path, "rb") as f:
            texts = {cell.index + 1: cell.source for cell in read_ipynb(f.read())[1]}
    except (OSError, NotebookError):
        texts = {}
    here = os.path.abspath(path)

    def cell_of(where: str | None) -> tuple[str, str] | None:
        file, number = file_and_cell(where or "")
        if number is None or number not in cells or os.path.abspath(file) != here:
            return None
        return cells[number], texts.get(number, "")

    runs = _runs(out, encoding, cell_of)
    return {uri: runs.get(uri, ProbeRun(text=texts.get(number, ""))) for number, uri in cells.items()}


def _runs(out: str, encoding: str, place: Callable[[str | None], tuple[str, str] | None]) -> dict[str, ProbeRun]:
    """The report's observations and finding statuses by the document they are in: `place(path)` gives
    (document, its text as the probe ran it), or None for a path not shown."""
    try:
        data = json.loads(out or "[]")
    except ValueError:
        raise JsonRpcInvalidParams("probe printed something that is not JSON") from None
    items = data.get("observations", []) if isinstance(data, dict) else data
    findings = data.get("findings", []) if isinstance(data, dict) else []
    runs: dict[str, tuple[ProbeRun, LineIndex]] = {}

    def run_of(item: dict[str, object]) -> tuple[ProbeRun, LineIndex] | None:
        where = place(str(item["path"]) if item.get("path") else None)
        if where is None:
            return None
        if where[0] not in runs:
            runs[where[0]] = (ProbeRun(text=where[1]), LineIndex(where[1], encoding))
        return runs[where[0]]

    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and "message" in item and (found := run_of(item)) is not None:
            found[0].observations.append(_observation(item, found[1]))
    for f in findings if isinstance(findings, list) else []:
        if isinstance(f, dict) and f.get("status") in _STATUS_WORDS and f.get("code") and (found := run_of(f)):
            start = found[1].to_lsp(_int(f.get("line"), 1), _int(f.get("column"), 1))
            found[0].statuses[(str(f["code"]), start.line)] = str(f["status"])
    return {document: run for document, (run, _index) in runs.items()}


def _observation(item: dict[str, object], index: LineIndex) -> types.Diagnostic:
    line = max(_int(item.get("line"), 1), 1)
    if item.get("column") and item.get("end_line") and item.get("end_column"):  # the probe saw the expression
        rng = index.range(line, _int(item["column"], 1), _int(item["end_line"], line), _int(item["end_column"], 1))
    else:
        start, end = _code_columns(index.lines[line - 1] if line <= len(index.lines) else "")
        rng = index.range(line, start, line, end)
    level = _LEVELS.get(str(item.get("severity")), types.DiagnosticSeverity.Warning)
    message = str(item["message"])
    count = _int(item.get("count"), 0)
    if count:
        message += f" (seen at runtime in {count} step{'s' if count != 1 else ''})"
    kind = str(item.get("code") or item.get("kind") or "")
    return types.Diagnostic(
        rng,
        message,
        severity=level,
        code=kind or None,
        code_description=types.CodeDescription(href=KIND_DOCS_URL) if kind else None,
        source=SOURCE,
    )


def _int(value: object, default: int) -> int:
    if isinstance(value, (int, str)):
        try:
            return int(value)
        except ValueError:
            pass
    return default


def _code_columns(line: str) -> tuple[int, int]:
    """The 1-based columns of the code on `line`: from its first character to its last before a comment."""
    start = len(line) - len(line.lstrip()) + 1
    end = len(line.rstrip()) + 1
    try:
        for tok in tokenize.generate_tokens(StringIO(line).readline):
            if tok.type == tokenize.COMMENT:
                end = len(line[: tok.start[1]].rstrip()) + 1
                break
    except (tokenize.TokenError, SyntaxError):  # a line of a longer statement: no comment found is fine
        pass
    return start, max(end, start)
