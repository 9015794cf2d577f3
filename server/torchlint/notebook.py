"""Jupyter notebooks as one program: the CLI and the language server lint the
code cells of a notebook together (a variable defined in cell 2 is known in
cell 5), then map findings and fixes back to the cell they belong to.

The program puts a marker comment line before each cell, so fixes that insert
or remove lines can be split back into cells. IPython syntax gets a Python
stand-in that keeps line numbers and columns (torchlint.ipython_syntax), and the
original line is restored when the cells are rebuilt. Each cell is parsed on its
own first: a cell Python cannot parse (an exercise's `x = # TODO`) is reported
where Python says, and left out of the program so the other cells are still
analysed.
"""

from __future__ import annotations

import codecs
import json
import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from torchlint import ipython_syntax
from torchlint.findings import Edit, Finding, Fix
from torchlint.notebook_json import Layout

if TYPE_CHECKING:
    from torchlint.engine.core.source import SourceError

_MARKER = "# torchlint-cell {}"
_MARKER_RE = re.compile(r"^# torchlint-cell (\d+)$")
_STAND_IN = "# torchlint-magic {}"  # ends a line whose original is magics[n]
_STAND_IN_RE = re.compile(r"# torchlint-magic (\d+)$")
_CELL_PATH = re.compile(r"(?P<file>.+\.ipynb):cell_(?P<cell>[1-9][0-9]*)")


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
    indent: str = ""  # the indentation IPython strips from the whole cell (and the program does too)


@dataclass
class Program:
    """The code cells joined into one Python text."""

    text: str
    spans: list[Span]
    magics: list[str] = field(default_factory=list)  # original lines behind the stand-ins
    endings: dict[int, bool] = field(default_factory=dict)  # cell index -> source ended with a newline
    # cell index -> why Python cannot parse that cell (cell-relative position); its lines are comments here
    broken: dict[int, SourceError] = field(default_factory=dict)

    def locate(self, line: int, column: int) -> tuple[int, int, int] | None:
        """(cell index, line in cell, column) of a program position; None inside a marker.

        Column 1 of a marker line (where a statement removal ends, or an
        insertion after a cell's last statement lands) is the end of the cell
        above it, not part of the next one.
        """
        for s in self.spans:
            end = s.first_line + s.line_count  # the next marker (or the end of the program)
            if s.first_line <= line < end:
                return s.index, line - s.first_line + 1, column + len(s.indent)
            if line == end:
                return (s.index, s.line_count + 1, 1) if column == 1 else None
        if self.spans and line > self.spans[-1].first_line:
            last = self.spans[-1]
            return last.index, last.line_count + 1, 1
        return None

    def cell_edits(self, fix: Fix) -> list[tuple[int, Edit]] | None:
        """A fix's edits in cell coordinates; None if an edit crosses cells."""
        out = []
        dedented = {s.index for s in self.spans if s.indent}
        for e in fix.edits:
            start, end = self.locate(e.line, e.column), self.locate(e.end_line, e.end_column)
            if start is not None and start[0] in dedented:
                return None  # its lines would need their indentation back, line by line: the CLI's split does
            if start is None or end is None or start[0] != end[0]:
                return None
            out.append((start[0], Edit(start[1], start[2], end[1], end[2], e.content)))
        return out

    def syntax_errors(self, path: str) -> list[Finding]:
        """One TL000 per cell Python cannot parse, in program coordinates (to_cells maps them back)."""
        from torchlint.engine.runner import error_finding

        first = {s.index: s.first_line - 1 for s in self.spans}
        return [
            error_finding(path, e.message, first[i] + e.line, e.column, first[i] + e.end_line, e.end_column)
            for i, e in self.broken.items()
        ]

    def split(self, text: str) -> dict[int, str] | None:
        """Cell sources from a (fixed) program text; None if a marker or a stand-in did not survive."""
        out: dict[int, list[str]] = {}
        current: list[str] | None = None
        restored: set[int] = set()
        for line in text.splitlines(keepends=True):
            body = line.rstrip("\r\n")
            m = _MARKER_RE.match(body)
            if m:
                current = out.setdefault(int(m.group(1)), [])
                continue
            if current is None:
                return None
            m = _STAND_IN_RE.search(body)
            if m and int(m.group(1)) < len(self.magics):
                restored.add(int(m.group(1)))
                line = self.magics[int(m.group(1))] + line[len(body) :]
            current.append(line)
        if sorted(out) != sorted(s.index for s in self.spans) or len(restored) != len(self.magics):
            return None
        sources = {}
        indents = {s.index: s.indent for s in self.spans}
        for index, lines in out.items():
            indent = indents.get(index, "")
            src = "".join(indent + line if indent and line.strip() else line for line in lines)
            if not self.endings.get(index, True) and src.endswith("\n"):
                src = src[:-1]
            sources[index] = src
        return sources


def build(cells: list[Cell]) -> Program:
    from torchlint.engine.core.source import split_lines  # lazily: the language server starts without libcst

    program = Program("", [])
    parts: list[str] = []
    line = 1
    for cell in cells:
        if cell.kind != "code":
            continue
        lines = split_lines(cell.source)
        if lines and lines[-1] == "":
            lines.pop()
        indent = _leading_indent(lines)
        if indent:
            lines = [text[len(indent) :] for text in lines]
        program.endings[cell.index] = cell.source.endswith(("\n", "\r"))
        stand_ins = ipython_syntax.stand_ins(lines)
        error = _refused("".join(stand_ins.get(i, text) + "\n" for i, text in enumerate(lines)))
        if error is not None:  # analysed without this cell: all of it becomes comments
            program.broken[cell.index] = error.within(lines)
            stand_ins = dict.fromkeys(range(len(lines)), "")
        parts.append(_MARKER.format(cell.index) + "\n")
        for i, text in enumerate(lines):
            if i in stand_ins:
                marker = _STAND_IN.format(len(program.magics))
                program.magics.append(text)
                text = f"{stand_ins[i]}  {marker}" if stand_ins[i] else marker
            parts.append(text + "\n")
        program.spans.append(Span(cell.index, line + 1, len(lines), indent))
        line += 1 + len(lines)
    program.text = "".join(parts)
    return program


def _leading_indent(lines: list[str]) -> str:
    """The indentation IPython removes from a cell before running it: that of its first non-blank line, when
    every non-blank line starts with it (IPython's `leading_indent`; a cell pasted from inside a function)."""
    first = next((text for text in lines if text.strip()), "")
    indent = first[: len(first) - len(first.lstrip(" \t"))]
    if indent and all(text.startswith(indent) or not text.strip() for text in lines):
        return indent
    return ""


def _refused(python: str) -> SourceError | None:
    """Why a cell cannot be parsed, in CPython's words; None if libcst, which may know newer
    grammar than the running Python, parses what CPython refuses (as for `.py` files)."""
    from torchlint.engine.core.source import syntax_error

    error = syntax_error(python)
    if error is None or error.too_deep:
        return error
    import libcst

    try:
        libcst.parse_module(python)
    except Exception:  # libcst raises a few types besides ParserSyntaxError on odd input
        return error
    return None


def read_ipynb(data: bytes) -> tuple[dict, list[Cell]]:
    """The notebook's JSON and its cells; raises NotebookError for anything else."""
    try:
        nb = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise NotebookError(f"not a Jupyter notebook (invalid JSON: {exc})") from None
    raw = nb.get("cells") if isinstance(nb, dict) else None
    if not isinstance(raw, list):
        raise NotebookError("not a Jupyter notebook (no `cells` list; nbformat 4 is supported)")
    python = runs_python(nb)
    cells = []
    for i, c in enumerate(raw):
        if not isinstance(c, dict):
            raise NotebookError(f"cell {i + 1} is not an object")
        src = c.get("source", "")
        if isinstance(src, list) and all(isinstance(s, str) for s in src):
            src = "".join(src)
        if not isinstance(src, str):
            raise NotebookError(f"cell {i + 1}: `source` must be a string or a list of strings")
        kind = str(c.get("cell_type", "code"))
        cells.append(Cell(i, src, kind if python or kind != "code" else "other"))
    return nb, cells


def runs_python(nb: dict) -> bool:
    """False when the notebook's metadata names another kernel language (a Julia or R notebook): its code
    cells are not Python, and linting them as Python would report every cell as a syntax error."""
    meta = nb.get("metadata")
    if not isinstance(meta, dict):
        return True
    for key, field_name in (("kernelspec", "language"), ("language_info", "name")):
        value = meta.get(key, {}).get(field_name) if isinstance(meta.get(key), dict) else None
        if isinstance(value, str) and value:
            return value.lower() in ("python", "python3", "ipython", "ipython3")
    return True


def write_ipynb(data: bytes, nb: dict, sources: dict[int, str]) -> bytes:
    """The notebook `data` (parsed: `nb`) with new sources for some cells.

    Only those `source` values change, each written in the style of the one it
    replaces; a file whose cells cannot be located is written whole in
    Jupyter's own layout (indent 1).
    """
    bom = codecs.BOM_UTF8 if data.startswith(codecs.BOM_UTF8) else b""
    layout = Layout.of(data[len(bom) :].decode("utf-8"))
    if layout is not None and all(i in layout.spans for i in sources):
        return bom + layout.with_sources(sources).encode("utf-8")
    for index, src in sources.items():
        nb["cells"][index]["source"] = src.splitlines(keepends=True)
    return (json.dumps(nb, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def cell_path(path: str, index: int) -> str:
    """How findings name a cell: `nb.ipynb:cell_3` (1-based, counting every cell)."""
    return f"{path}:cell_{index + 1}"


def file_and_cell(path: str) -> tuple[str, int | None]:
    """The inverse of cell_path: (notebook file, 1-based cell), or (path, None) for any other path."""
    m = _CELL_PATH.fullmatch(path)
    return (m["file"], int(m["cell"])) if m else (path, None)


def cite_cells(program: Program, f: Finding) -> str:
    """`f`'s message with each program line it cites (`on line 16`) named as Jupyter shows it (`on cell 3,
    line 5`): the CLI and the editor both say where the other line is."""
    message = f.message
    for line in f.cites:
        at = program.locate(line, 1)
        if at is not None:
            message = re.sub(rf"\bline {line}\b", f"cell {at[0] + 1}, line {at[1]}", message)
    return message


def to_cells(program: Program, path: str, findings: list[Finding]) -> list[Finding]:
    """Findings with the cell in the path, lines and columns relative to the cell, cited lines by cell."""
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
                cite_cells(program, f),
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
    return replace(fix, edits=tuple(e for _, e in edits))


@dataclass
class NotebookResult:
    findings: list[Finding]
    applied: int = 0
    data: bytes | None = None  # the fixed notebook, when fixes changed it


def _lint(program: Program, path: str, rules, torch_version: str | None) -> list[Finding]:
    from torchlint.engine import lint_text

    findings = lint_text(path, program.text, rules, torch_version=torch_version).findings
    return to_cells(program, path, program.syntax_errors(path) + findings)


def check(
    path: str, data: bytes, rules, fix: bool = False, unsafe: bool = False, torch_version: str | None = None
) -> NotebookResult:
    """Lint (and with `fix`, fix; with `unsafe`, unsafe fixes too) a notebook file as one
    program, for the target `torch_version` (None: its project's); findings name their cell."""
    from torchlint.engine import fix_text
    from torchlint.engine.runner import error_finding

    try:
        nb, cells = read_ipynb(data)
    except NotebookError as exc:
        return NotebookResult([error_finding(path, str(exc))])
    program = build(cells)
    if not fix:
        return NotebookResult(_lint(program, path, rules, torch_version))
    fixed = fix_text(path, program.text, rules, unsafe=unsafe, torch_version=torch_version)
    out = NotebookResult(to_cells(program, path, program.syntax_errors(path) + fixed.remaining), fixed.applied)
    if fixed.applied == 0 or fixed.text == program.text:
        out.applied = 0
        return out
    sources = program.split(fixed.text)
    if sources is None:  # a fix moved a cell boundary or a stand-in: refuse rather than guess
        out.applied = 0
        out.findings.insert(0, error_finding(path, "fixes could not be mapped back to cells; notebook left unchanged"))
        return out
    changed = {i: s for i, s in sources.items() if s != cells[i].source}
    new_cells = [Cell(c.index, changed.get(c.index, c.source), c.kind) for c in cells]
    out.findings = _lint(
        build(new_cells), path, rules, torch_version
    )  # line numbers moved: report against the fixed cells
    out.data = write_ipynb(data, nb, changed)
    return out
