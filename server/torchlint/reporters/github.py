"""GitHub Actions workflow commands, shown as annotations on pull requests.

`file=` is relative to the repository root, as GitHub resolves it; a notebook
finding names the `.ipynb` file and the line of its JSON holding the cell line
(the message says which cell and line Jupyter shows).
"""

from __future__ import annotations

from torchlint.findings import Finding, Severity
from torchlint.reporters.locations import Locator, message

_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def _escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_prop(s: str) -> str:
    return _escape_data(s).replace(":", "%3A").replace(",", "%2C")


def render(findings: list[Finding], **_) -> str:
    locator = Locator()
    out = []
    for f in findings:
        at = locator.locate(f)
        props = [f"file={_escape_prop(locator.relative(at.file) or at.file)}"]
        if at.region is not None:
            line, column, end_line, end_column = at.region
            props.append(f"line={line},col={column},endLine={end_line},endColumn={end_column}")
        props.append(f"title={_escape_prop(f.code)}")
        out.append(f"::{_LEVEL[f.severity]} {','.join(props)}::{_escape_data(f.code + ' ' + message(f, at))}")
    return "\n".join(out) + ("\n" if out else "")
