"""Lint a snapshot and turn its findings into LSP diagnostics.

Each diagnostic's `data` carries its fixes as ready-made text edits (and the
lines a `# noqa` may go on), so a code action needs no second lint. Runs in the
lint thread: nothing here touches the server.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from torchlint.findings import Finding, Fix, Severity, in_offered_order
from torchlint.lsp.coordinates import LineIndex
from torchlint.lsp.documents import Snapshot, text_snapshot
from torchlint.lsp.settings import LintSetup
from torchlint.lsp.uris import from_path
from torchlint.notebook import cite_cells

if TYPE_CHECKING:
    from torchlint.checker import RunResult
    from torchlint.engine.runner import Parser

SOURCE = "torchlint"
MAX_CHARS = 1_000_000  # beyond this a file is not linted (a log message says so): minutes of CPU otherwise
SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}


def lint(
    snap: Snapshot,
    setup: LintSetup,
    parser: Parser | None = None,
    dependencies: set[str] | None = None,
) -> dict[str, list[types.Diagnostic]]:
    """Diagnostics for every part of the snapshot (an empty list clears a part).

    `parser`: the server's incremental parser, so an edit re-parses only what changed;
    `dependencies` receives the other project files the findings were derived from.
    """
    out: dict[str, list[types.Diagnostic]] = {p.uri: [] for p in snap.parts}
    if not snap.parts:
        return out
    if setup.config_error:
        out[snap.parts[0].uri].append(
            types.Diagnostic(
                types.Range(types.Position(0, 0), types.Position(0, 0)),
                f"torchlint is not checking this file: {setup.config_error}",
                severity=types.DiagnosticSeverity.Error,
                code="config",
                source=SOURCE,
            )
        )
        return out
    if len(snap.text) > MAX_CHARS or not setup.rules:
        return out
    from torchlint.engine import lint_text  # imported on first use: the server starts without libcst

    result = lint_text(snap.path, snap.text, list(setup.rules), parser=parser, torch_version=setup.torch_version)
    findings = result.findings
    if dependencies is not None:
        dependencies.update(result.dependencies)
    if snap.program is not None:  # notebook cells Python cannot parse were left out of the program
        findings = [*snap.program.syntax_errors(snap.path), *findings]
    for f in findings:
        placed = to_diagnostic(snap, f, setup.severity)
        if placed is not None:
            out[placed[0]].append(placed[1])
    return out


def to_diagnostic(snap: Snapshot, f: Finding, severity: Mapping[str, Severity]) -> tuple[str, types.Diagnostic] | None:
    placed = snap.lsp_range(f.line, f.column, f.end_line, f.end_column)
    if placed is None:  # a span that crosses notebook cells: point at its start
        start = snap.place(f.line, f.column)
        if start is None:
            return None
        pos = snap.index(start[0]).to_lsp(start[1], start[2])
        placed = start[0], types.Range(pos, pos)
    uri, rng = placed
    level = severity.get(f.code, f.severity)
    fixes = [x for x in (_fix_data(snap, fx) for fx in menu_order((f.fix, *f.alternatives)) if fx) if x]
    noqa: list[int] = []
    for line in (f.statement_line or f.line, f.line):
        at = snap.place(line, 1)
        if at is not None and at[0] == uri and at[1] - 1 not in noqa:
            noqa.append(at[1] - 1)
    data = {
        "key": snap.key,
        "generation": snap.generation,
        "text": text_mark(snap.text),
        "fixes": fixes,
        "noqa": noqa,
    }
    return uri, types.Diagnostic(
        rng,
        f.message if snap.program is None else cite_cells(snap.program, f),
        severity=SEVERITY[Severity(level)],
        code=f.code,
        code_description=types.CodeDescription(href=f.url) if f.code != "TL000" else None,
        source=SOURCE,
        data=data,
    )


def _fix_data(snap: Snapshot, fix: Fix) -> dict[str, Any] | None:
    edits: list[list[object]] = []
    for e in fix.edits:
        placed = snap.lsp_range(e.line, e.column, e.end_line, e.end_column)
        if placed is None:
            return None
        uri, r = placed
        edits.append([uri, r.start.line, r.start.character, r.end.line, r.end.character, e.content])
    return {"title": fix.message, "applicability": fix.applicability.value, "risk": fix.risk, "edits": edits}


def menu_order(fixes: Sequence[Fix | None]) -> list[Fix]:
    """A finding's fixes as the quick-fix menu lists them: safe, then unsafe, then display (stable)."""
    return in_offered_order(list(fixes))


def from_run(result: RunResult) -> dict[str, list[types.Diagnostic]]:
    """Diagnostics per file from a checker run over files on disk."""
    from torchlint.engine.core.source import SourceError, decode

    out: dict[str, list[types.Diagnostic]] = {}
    for r in result.files:
        uri = from_path(r.path)
        out[uri] = []
        if r.path.endswith(".ipynb"):
            out[uri] = _closed_notebook(r.path, r.findings)
            continue
        if not r.findings:
            continue
        try:
            text = decode(Path(r.path).read_bytes()).text
        except (OSError, SourceError):
            text = ""
        snap = text_snapshot(uri, text, 0, types.PositionEncodingKind.Utf16)
        for f in r.findings:
            placed = to_diagnostic(snap, f, {})  # the run applied the severities
            if placed is not None:
                placed[1].data = None  # no live document to apply fixes to
                out[uri].append(placed[1])
    return out


def _closed_notebook(path: str, findings: list[Finding]) -> list[types.Diagnostic]:
    """A notebook that is not open: its cells have no URI until the editor opens it (then its own
    lint replaces these), so each finding goes on the notebook file, at the line of its JSON that
    holds the cell line, and its message names the cell and line, as CI annotations do."""
    from torchlint.notebook import file_and_cell
    from torchlint.notebook_json import Layout

    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError):
        text = ""
    layout = Layout.of(text) if text else None
    index = LineIndex(text)
    out = []
    for f in findings:
        _, cell = file_and_cell(f.path)
        start = end = None
        if layout is not None and cell is not None:
            start = layout.position(cell - 1, f.line, f.column)
            end = layout.position(cell - 1, f.end_line, f.end_column)
        start = start or (1, 1)
        end = max(start, end or start)
        out.append(
            types.Diagnostic(
                index.range(*start, *end),
                f"cell {cell}, line {f.line}: {f.message}" if cell is not None else f.message,
                severity=SEVERITY[Severity(f.severity)],
                code=f.code,
                code_description=types.CodeDescription(href=f.url) if f.code != "TL000" else None,
                source=SOURCE,
            )
        )
    return out


def text_mark(text: str) -> int:
    """A mark of the text a diagnostic's fixes were made for: a re-lint of the same text (the import index
    became ready, a dependency changed) keeps them valid. Python caches a string's hash; 52 bits stay exact in
    the client's JSON numbers."""
    return hash(text) & (2**52 - 1)
