"""Probing a notebook: its code cells run in order as one program, as "Run All" runs them.

The program is the one the linter reads (torchlint.notebook): IPython lines (`%matplotlib`,
`!pip`) are replaced by Python that does nothing, so they are skipped, and the report says
which. The child runs the program under the notebook's path; the report's lines are then
moved back into their cells (`nb.ipynb:cell_3`, line 2), findings and observations alike.
"""

from __future__ import annotations

from torchlint import notebook


def program_of(path: str) -> notebook.Program:
    """The code cells of the notebook at `path` as one program; raises NotebookError."""
    with open(path, "rb") as fh:
        _nb, cells = notebook.read_ipynb(fh.read())
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


def _place(program: notebook.Program, path: str, item: dict) -> None:
    """Move `item`'s path and line (and end line) from the program into its cell, in place."""
    if item.get("path") != path or not item.get("line"):
        return
    where = program.locate(item["line"], 1)
    if where is None:
        return
    if item.get("end_line"):
        end = program.locate(item["end_line"], 1)
        item["end_line"] = end[1] if end is not None and end[0] == where[0] else where[1]
    item["path"], item["line"] = notebook.cell_path(path, where[0]), where[1]


def to_cells(program: notebook.Program, path: str, report: dict) -> None:
    """The report's findings, observations, their stacks and sites, and the exception, in cell positions."""
    for finding in report["findings"]:
        _place(program, path, finding)
        finding["fix"] = None  # its edits are in program lines; `torchlint check --fix` fixes notebooks
    for obs in report["observations"]:
        for site in [*obs.get("stack", ()), *obs.get("facts", {}).get("sites", ())]:
            _place(program, path, site)
        _place(program, path, obs)
    if report["exception"]:
        _place(program, path, report["exception"])
