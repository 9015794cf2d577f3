"""Where a finding is in the file on disk, for tools that attach it to a file.

CI annotations (SARIF, GitHub workflow commands) name a file relative to the
repository and a line of that file. A notebook finding is counted within its
cell (`nb.ipynb:cell_3`, line 4); here it becomes the `nb.ipynb` line and column
holding that cell line in the JSON, with the cell kept aside for the message.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from torchlint.engine.core.source import split_lines
from torchlint.findings import Finding
from torchlint.notebook import file_and_cell
from torchlint.notebook_json import Layout


def repo_root() -> str:
    """The root of the git repository the run is in, else the working directory."""
    import subprocess  # not at import: only the github and sarif formats ask

    try:
        out = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True, timeout=5)
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return os.getcwd()


@dataclass(frozen=True)
class Location:
    file: str  # the file on disk
    cell: int | None  # 1-based notebook cell, None for any other file
    region: tuple[int, int, int, int] | None  # line, column, end line, end column in the file; None if unknown
    text: str  # the finding's (cell) line, stripped: what fingerprints hash


def message(f: Finding, at: Location) -> str:
    """The finding's message; for a notebook, led by the cell and the line in it that Jupyter shows."""
    return f.message if at.cell is None else f"cell {at.cell}, line {f.line}: {f.message}"


class Locator:
    """Locates findings, reading each file (and finding each notebook's cells) once."""

    def __init__(self) -> None:
        self.root = repo_root()
        self._lines: dict[str, list[str]] = {}
        self._layouts: dict[str, Layout | None] = {}

    def relative(self, path: str) -> str | None:
        """`path` relative to the repository root, with `/`; None when it lies outside."""
        try:
            rel = os.path.relpath(os.path.abspath(path), self.root)
        except ValueError:  # another drive
            return None
        return None if rel == ".." or rel.startswith(".." + os.sep) else rel.replace(os.sep, "/")

    def locate(self, f: Finding) -> Location:
        file, cell = file_and_cell(f.path)
        if cell is None:
            lines = self._file_lines(file)
            text = lines[f.line - 1] if 0 < f.line <= len(lines) else ""
            start, end = (f.line, f.column), (f.end_line, f.end_column)
            return Location(file, None, (*start, *max(start, end)), text.strip())
        layout = self._layout(file)
        source = layout.source(cell - 1) if layout else None
        if source is None:
            return Location(file, cell, None, "")
        lines = split_lines(source)
        start = layout.position(cell - 1, f.line, f.column)
        end = layout.position(cell - 1, f.end_line, f.end_column)
        text = lines[f.line - 1] if 0 < f.line <= len(lines) else ""
        return Location(file, cell, (*start, *max(start, end)), text.strip())

    def _file_lines(self, path: str) -> list[str]:
        if path not in self._lines:
            try:
                with open(path, encoding="utf-8", errors="replace") as fh:
                    self._lines[path] = split_lines(fh.read())
            except OSError:
                self._lines[path] = []
        return self._lines[path]

    def _layout(self, path: str) -> Layout | None:
        if path not in self._layouts:
            try:
                with open(path, encoding="utf-8-sig") as fh:
                    self._layouts[path] = Layout.of(fh.read())
            except (OSError, UnicodeDecodeError):
                self._layouts[path] = None
        return self._layouts[path]
