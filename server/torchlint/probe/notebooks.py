"""Probing a notebook: its code cells run in order as one program, as "Run All" runs them.

The program is the one the linter reads (torchlint.notebook): IPython lines (`%matplotlib`,
`!pip`) are replaced by Python that does nothing, so they are skipped, and the report says
which. The child runs the program under the notebook's path; the report's lines are then
moved back into their cells (`nb.ipynb:cell_3`, line 2), findings and observations alike.
"""

from __future__ import annotations

from typing import NamedTuple

from torchlint import notebook
from torchlint.probe.json_types import Report


def program_of(path: str) -> notebook.Program:
    """The code cells of the notebook at `path` as one program; raises NotebookError."""
    with open(path, "rb") as fh:
        nb, cells = notebook.read_ipynb(fh.read())
    if not notebook.runs_python(nb):
        raise notebook.NotebookError("its kernel is not Python (metadata: kernelspec / language_info)")
    return notebook.build(cells)


def skipped(program: notebook.Program) -> list[str]:
    """The IPython lines that did not run, as `cell N: line`."""
    out = []
    lines = program.text.splitlines()
    for span in program.spans:
        for offset in range(span.line_count):
            line = lines[span.first_line - 1 + offset]
            index = line.rfind("# torchlint-magic ")
            if index >= 0:
                magic = program.magics[int(line[index:].split()[-1])]
                out.append(f"cell {span.index + 1}: {magic.strip()}")
    return out


class _Moved(NamedTuple):
    path: str  # `nb.ipynb:cell_3`
    line: int
    end_line: int | None  # None when the item had none


def _moved(
    program: notebook.Program, path: str, at: str | None, line: int | None, end_line: int | None
) -> _Moved | None:
    """Where a position in the program at `path` is in its cell; None for a position elsewhere."""
    if at != path or not line:
        return None
    where = program.locate(line, 1)
    if where is None:
        return None
    end = None
    if end_line:
        last = program.locate(end_line, 1)
        end = last[1] if last is not None and last[0] == where[0] else where[1]
    return _Moved(notebook.cell_path(path, where[0]), where[1], end)


def to_cells(program: notebook.Program, path: str, report: Report) -> None:
    """The report's findings, observations, their stacks and sites, and the exception, in cell positions."""
    for finding in report["findings"]:
        if moved := _moved(program, path, finding.get("path"), finding.get("line"), finding.get("end_line")):
            finding["path"], finding["line"] = moved.path, moved.line
            if moved.end_line is not None:
                finding["end_line"] = moved.end_line
        finding["fix"] = None  # its edits are in program lines; `torchlint check --fix` fixes notebooks
    for obs in report["observations"]:
        for site in [*obs.get("stack", ()), *obs.get("facts", {}).get("sites", ())]:
            if moved := _moved(program, path, site["path"], site["line"], None):
                site["path"], site["line"] = moved.path, moved.line
        if moved := _moved(program, path, obs["path"], obs["line"], obs.get("end_line")):
            obs["path"], obs["line"] = moved.path, moved.line
            if moved.end_line is not None:
                obs["end_line"] = moved.end_line
    exception = report["exception"]
    if exception and (moved := _moved(program, path, exception["path"], exception["line"], None)):
        exception["path"], exception["line"] = moved.path, moved.line
