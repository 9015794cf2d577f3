"""IPython syntax in notebook cells, and the Python that stands in for it.

A code cell may hold lines that are not Python: `%magic`, `!shell`, `x = !cmd`,
`x = %time f()`, `obj?` / `?obj` help, and `%%cell` magics. IPython recognises
them only where a logical line starts (never inside brackets or strings), so we
follow the cell's brackets and strings to find those places. Each such line gets
a stand-in that keeps the cell's line count and the columns of the Python around
it: findings and fixes then map back into the cell unchanged.
"""

from __future__ import annotations

import re

# `%%time` and friends run their body as Python: only their first line is IPython.
PYTHON_BODY_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun"})

_ESCAPE = re.compile(r"[ \t]*[%!]")  # `%magic`, `%%magic`, `!cmd`, `!!cmd`
# IPython's own shape for `a, b.c = !cmd` and `x = %magic args`: names or attributes, then `=`.
_ASSIGN = re.compile(r"[ \t]*[A-Za-z_][\w.]*(?:[ \t]*,[ \t]*[A-Za-z_][\w.]*)*[ \t]*=[ \t]*(?=[%!])")
_HELP = re.compile(r"[ \t]*(?:\?{1,2}[ \t]*%{0,2}[\w.*]+|%{0,2}[\w.*]+\?{1,2})[ \t]*")
_CELL_MAGIC = re.compile(r"[ \t]*%%(\w*)")


def stand_ins(lines: list[str]) -> dict[int, str]:
    """Line index -> the Python replacing that line ("" for a line that becomes a comment)."""
    first = _CELL_MAGIC.match(lines[0]) if lines else None
    if first is not None and first.group(1) not in PYTHON_BODY_CELL_MAGICS:
        return dict.fromkeys(range(len(lines)), "")  # `%%bash`, `%%writefile`...: not Python at all
    out: dict[int, str] = {}
    if first is not None:
        out[0] = ""
    scanner = _Scanner()
    continued_escape = False
    for i, line in enumerate(lines):
        if i in out:
            continue
        if continued_escape:  # `!pip install a \` goes on here
            out[i] = ""
            continued_escape = line.endswith("\\")
            continue
        if scanner.at_line_start():
            stand_in = _stand_in(line)
            if stand_in is not None:
                out[i] = stand_in
                continued_escape = line.endswith("\\")
                continue
        scanner.feed(line)
    return out


def _stand_in(line: str) -> str | None:
    assign = _ASSIGN.match(line)
    if assign is not None:
        return assign.group() + "..."  # the names stay bound, to a value we know nothing about
    if _ESCAPE.match(line) or _HELP.fullmatch(line):
        return line[: len(line) - len(line.lstrip(" \t"))] + "pass"  # keeps the block it sits in
    return None


class _Scanner:
    """Just enough of Python's tokenizer to know where logical lines start."""

    def __init__(self) -> None:
        self.depth = 0  # open brackets
        self.quote: str | None = None  # delimiter of a string still open at the end of a line
        self.continued = False  # the last line ended with a backslash

    def at_line_start(self) -> bool:
        return not self.depth and self.quote is None and not self.continued

    def feed(self, line: str) -> None:
        i, n = 0, len(line)
        self.continued = False
        while i < n:
            c = line[i]
            if self.quote is not None:
                if c == "\\":
                    i += 2
                    continue
                if line.startswith(self.quote, i):
                    i += len(self.quote)
                    self.quote = None
                    continue
                i += 1
                continue
            if c == "#":
                break
            if c in "'\"":
                self.quote = c * 3 if line.startswith(c * 3, i) else c
                i += len(self.quote)
                continue
            if c in "([{":
                self.depth += 1
            elif c in ")]}":
                self.depth = max(0, self.depth - 1)
            elif c == "\\" and i == n - 1:
                self.continued = True
            i += 1
        if self.quote is not None and len(self.quote) == 1:
            if line.endswith("\\"):
                self.continued = True
            else:
                self.quote = None  # an unterminated one-line string: Python reports it, we move on
