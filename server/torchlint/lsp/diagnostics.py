"""Lint a snapshot and turn its findings into LSP diagnostics.

Each diagnostic's `data` carries its fixes as ready-made text edits (and the
lines a `# noqa` may go on), so a code action needs no second lint. Runs in the
lint thread: nothing here touches the server.
"""

from __future__ import annotations

from lsprotocol import types

from torchlint.findings import Finding, Fix, Severity
from torchlint.lsp.documents import Snapshot
from torchlint.lsp.settings import Selection

SOURCE = "torchlint"
MAX_CHARS = 1_000_000  # beyond this a file is not linted (a log message says so): minutes of CPU otherwise
SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}


def lint(snap: Snapshot, sel: Selection, parser=None) -> dict[str, list[types.Diagnostic]]:
    """Diagnostics for every part of the snapshot (an empty list clears a part).

    `parser`: the server's incremental parser, so an edit re-parses only what changed.
    """
    out: dict[str, list[types.Diagnostic]] = {p.uri: [] for p in snap.parts}
    if not snap.parts:
        return out
    if sel.config_error:
        out[snap.parts[0].uri].append(
            types.Diagnostic(
                types.Range(types.Position(0, 0), types.Position(0, 0)),
                f"torchlint is not checking this file: {sel.config_error}",
                severity=types.DiagnosticSeverity.Error,
                code="config",
                source=SOURCE,
            )
        )
        return out
    if len(snap.text) > MAX_CHARS or not sel.rules:
        return out
    from torchlint.engine import lint_text  # imported on first use: the server starts without libcst

    for f in lint_text(snap.path, snap.text, list(sel.rules), parser=parser).findings:
        placed = to_diagnostic(snap, f, sel.severity)
        if placed is not None:
            out[placed[0]].append(placed[1])
    return out


def to_diagnostic(snap: Snapshot, f: Finding, severity: dict) -> tuple[str, types.Diagnostic] | None:
    placed = snap.lsp_range(f.line, f.column, f.end_line, f.end_column)
    if placed is None:  # a span that crosses notebook cells: point at its start
        start = snap.place(f.line, f.column)
        if start is None:
            return None
        pos = snap.index(start[0]).to_lsp(start[1], start[2])
        placed = start[0], types.Range(pos, pos)
    uri, rng = placed
    level = severity.get(f.code, f.severity)
    fixes = [x for x in (_fix_data(snap, fx) for fx in (f.fix, *f.alternatives) if fx) if x]
    noqa = []
    for line in (f.statement_line or f.line, f.line):
        at = snap.place(line, 1)
        if at is not None and at[0] == uri and at[1] - 1 not in noqa:
            noqa.append(at[1] - 1)
    data = {
        "key": snap.key,
        "generation": snap.generation,
        "fixes": fixes,
        "noqa": noqa,
        "preferred": f.fix is not None,
    }
    return uri, types.Diagnostic(
        rng,
        f.message,
        severity=SEVERITY[Severity(level)],
        code=f.code,
        code_description=types.CodeDescription(href=f.url) if f.code != "TL000" else None,
        source=SOURCE,
        data=data,
    )


def _fix_data(snap: Snapshot, fix: Fix) -> dict | None:
    edits = []
    for e in fix.edits:
        placed = snap.lsp_range(e.line, e.column, e.end_line, e.end_column)
        if placed is None:
            return None
        uri, r = placed
        edits.append([uri, r.start.line, r.start.character, r.end.line, r.end.character, e.content])
    return {"title": fix.message, "edits": edits}
