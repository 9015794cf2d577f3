"""GitHub Actions workflow commands, shown as annotations on pull requests."""

from __future__ import annotations

from torchlint.findings import Finding, Severity

_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def _escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_prop(s: str) -> str:
    return _escape_data(s).replace(":", "%3A").replace(",", "%2C")


def render(findings: list[Finding], **_) -> str:
    out = []
    for f in findings:
        props = (
            f"file={_escape_prop(f.path)},line={f.line},col={f.column},"
            f"endLine={f.end_line},endColumn={f.end_column},title={_escape_prop(f.code)}"
        )
        out.append(f"::{_LEVEL[f.severity]} {props}::{_escape_data(f.code + ' ' + f.message)}")
    return "\n".join(out) + ("\n" if out else "")
