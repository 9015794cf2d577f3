"""Jupyter notebooks as one program: the CLI and the language server lint the
code cells of a notebook together (a variable defined in cell 2 is known in
cell 5), then map findings and fixes back to the cell they belong to.

The program puts a marker comment line before each cell, so fixes that insert
or remove lines can be split back into cells, and it replaces IPython syntax
(`%magic`, `!shell`, `%%cell magic`) with placeholder lines that keep the line
numbering and are restored when the cells are rebuilt.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field

from torchlint.findings import Edit, Finding, Fix

_MARKER = "# torchlint-cell {}"
_MARKER_RE = re.compile(r"^# torchlint-cell (\d+)$")
_PLACEHOLDER = "pass  # torchlint-magic {}"
_PLACEHOLDER_RE = re.compile(r"^([ \t]*)pass  # torchlint-magic (\d+)$")
_CELL_PLACEHOLDER = "# torchlint-magic {}"
_CELL_PLACEHOLDER_RE = re.compile(r"^# torchlint-magic (\d+)$")
_LINE_MAGIC = re.compile(r"^([ \t]*)[%!]")


class NotebookError(Exception):
    """The file is not a notebook we can read."""


@dataclass(frozen=True)
class Cell:
    index: int  # position among all cells, 0-based
    source: str
    kind: str = "code"


@dataclass
class Span:
    index: int  # Cell.index
    first_line: int  # program line (1-based) of the cell's first line
    line_count: int  # lines of the cell in the program


@dataclass
class Program:
    """The code cells joined into one Python text."""

    text: str
    spans: list[Span]
    magics: list[str] = field(default_factory=list)  # original lines behind the placeholders
    endings: dict[int, bool] = field(default_factory=dict)  # cell index -> source ended with a newline

    def locate(self, line: int, column: int) -> tuple[int, int, int] | None:
        """(cell index, line in cell, column) of a program position; None inside a marker.

        Column 1 of a marker line (where a statement removal ends, or an
        insertion after a cell's last statement lands) is the end of the cell
        above it, not part of the next one.
        """
        for s in self.spans:
            end = s.first_line + s.line_count  # the next marker (or the end of the program)
            if s.first_line <= line < end:
                return s.index, line - s.first_line + 1, column
            if line == end:
                return (s.index, s.line_count + 1, 1) if column == 1 else None
        if self.spans and line > self.spans[-1].first_line:
            last = self.spans[-1]
            return last.index, last.line_count + 1, 1
        return None

    def cell_edits(self, fix: Fix) -> list[tuple[int, Edit]] | None:
        """A fix's edits in cell coordinates; None if an edit crosses cells."""
        out = []
        for e in fix.edits:
            start, end = self.locate(e.line, e.column), self.locate(e.end_line, e.end_column)
            if start is None or end is None or start[0] != end[0]:
                return None
            out.append((start[0], Edit(start[1], start[2], end[1], end[2], e.content)))
        return out

    def split(self, text: str) -> dict[int, str] | None:
        """Cell sources from a (fixed) program text; None if the markers did not survive."""
        out: dict[int, list[str]] = {}
        current: list[str] | None = None
        for line in text.splitlines(keepends=True):
            m = _MARKER_RE.match(line.rstrip("\r\n"))
            if m:
                current = out.setdefault(int(m.group(1)), [])
                continue
            if current is None:
                return None
            current.append(self._restore(line))
        if sorted(out) != sorted(s.index for s in self.spans):
            return None
        sources = {}
        for index, lines in out.items():
            src = "".join(lines)
            if not self.endings.get(index, True) and src.endswith("\n"):
                src = src[:-1]
            sources[index] = src
        return sources

    def _restore(self, line: str) -> str:
        body = line.rstrip("\r\n")
        ending = line[len(body) :]
        m = _PLACEHOLDER_RE.match(body) or _CELL_PLACEHOLDER_RE.match(body)
        if m is None:
            return line
        return self.magics[int(m.group(m.lastindex))] + ending


def build(cells: list[Cell]) -> Program:
    parts: list[str] = []
    spans: list[Span] = []
    magics: list[str] = []
    endings: dict[int, bool] = {}
    from torchlint.engine.source import split_lines  # lazily: the language server starts without libcst

    line = 1
    for cell in cells:
        if cell.kind != "code":
            continue
        lines = split_lines(cell.source)
        if lines and lines[-1] == "":
            lines.pop()
        endings[cell.index] = cell.source.endswith(("\n", "\r"))
        cell_magic = bool(lines) and lines[0].lstrip().startswith("%%")
        body = []
        for text in lines:
            m = _LINE_MAGIC.match(text)
            if cell_magic or m:
                magics.append(text)
                n = len(magics) - 1
                body.append(_CELL_PLACEHOLDER.format(n) if cell_magic else m.group(1) + _PLACEHOLDER.format(n))
            else:
                body.append(text)
        parts.append(_MARKER.format(cell.index) + "\n")
        parts.extend(t + "\n" for t in body)
        spans.append(Span(cell.index, line + 1, len(body)))
        line += 1 + len(body)
    return Program("".join(parts), spans, magics, endings)


def read_ipynb(data: bytes) -> tuple[dict, list[Cell]]:
    """The notebook's JSON and its cells; raises NotebookError for anything else."""
    try:
        nb = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise NotebookError(f"not a Jupyter notebook (invalid JSON: {exc})") from None
    raw = nb.get("cells") if isinstance(nb, dict) else None
    if not isinstance(raw, list):
        raise NotebookError("not a Jupyter notebook (no `cells` list; nbformat 4 is supported)")
    cells = []
    for i, c in enumerate(raw):
        if not isinstance(c, dict):
            raise NotebookError(f"cell {i + 1} is not an object")
        src = c.get("source", "")
        if isinstance(src, list) and all(isinstance(s, str) for s in src):
            src = "".join(src)
        if not isinstance(src, str):
            raise NotebookError(f"cell {i + 1}: `source` must be a string or a list of strings")
        cells.append(Cell(i, src, str(c.get("cell_type", "code"))))
    return nb, cells


def write_ipynb(nb: dict, sources: dict[int, str]) -> bytes:
    """The notebook with new cell sources, in Jupyter's own layout (indent 1)."""
    for index, src in sources.items():
        nb["cells"][index]["source"] = src.splitlines(keepends=True)
    return (json.dumps(nb, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def cell_path(path: str, index: int) -> str:
    """How findings name a cell: `nb.ipynb:cell_3` (1-based, counting every cell)."""
    return f"{path}:cell_{index + 1}"


def to_cells(program: Program, path: str, findings: list[Finding]) -> list[Finding]:
    """Findings with the cell in the path and lines and columns relative to the cell."""
    out = []
    for f in findings:
        start = program.locate(f.line, f.column)
        if start is None:
            start = (program.spans[0].index, 1, 1) if program.spans else (0, 1, 1)
        end = program.locate(f.end_line, f.end_column)
        if end is None or end[0] != start[0]:
            end = start
        stmt = program.locate(f.statement_line, 1) if f.statement_line else None
        out.append(
            Finding(
                cell_path(path, start[0]),
                start[1],
                start[2],
                end[1],
                end[2],
                f.code,
                f.name,
                f.message,
                f.severity,
                _cell_fix(program, f.fix, start[0]),
                tuple(x for x in (_cell_fix(program, a, start[0]) for a in f.alternatives) if x),
                stmt[1] if stmt and stmt[0] == start[0] else start[1],
            )
        )
    return out


def _cell_fix(program: Program, fix: Fix | None, index: int) -> Fix | None:
    if fix is None:
        return None
    edits = program.cell_edits(fix)
    if edits is None or any(i != index for i, _ in edits):
        return None
    return Fix(fix.message, tuple(e for _, e in edits))


@dataclass
class NotebookResult:
    findings: list[Finding]
    applied: int = 0
    data: bytes | None = None  # the fixed notebook, when fixes changed it
    diff: str = ""


def check(path: str, data: bytes, rules, fix: bool = False) -> NotebookResult:
    """Lint (and with `fix`, fix) a notebook file as one program; findings name their cell."""
    from torchlint.engine import fix_text, lint_text
    from torchlint.engine.runner import error_finding

    try:
        nb, cells = read_ipynb(data)
    except NotebookError as exc:
        return NotebookResult([error_finding(path, str(exc))])
    program = build(cells)
    if not fix:
        return NotebookResult(to_cells(program, path, lint_text(path, program.text, rules).findings))
    fixed = fix_text(path, program.text, rules)
    out = NotebookResult(to_cells(program, path, fixed.remaining), fixed.applied)
    if fixed.applied == 0 or fixed.text == program.text:
        out.applied = 0
        return out
    sources = program.split(fixed.text)
    if sources is None:  # a fix moved a cell boundary: refuse rather than guess
        out.applied = 0
        out.findings.insert(0, error_finding(path, "fixes could not be mapped back to cells; notebook left unchanged"))
        return out
    changed = {i: s for i, s in sources.items() if s != cells[i].source}
    new_cells = [Cell(c.index, changed.get(c.index, c.source), c.kind) for c in cells]
    new_program = build(new_cells)  # line numbers moved: report against the fixed cells
    out.findings = to_cells(new_program, path, lint_text(path, new_program.text, rules).findings)

    out.diff = "".join(
        "".join(
            difflib.unified_diff(
                cells[i].source.splitlines(keepends=True),
                s.splitlines(keepends=True),
                fromfile=f"a/{cell_path(path, i)}",
                tofile=f"b/{cell_path(path, i)}",
            )
        )
        for i, s in sorted(changed.items())
    )
    out.data = write_ipynb(nb, changed)
    return out
