"""`# noqa` comments: the one grammar for what silences a finding.

`# noqa` (every code) or `# noqa: TL101, TL601` on a finding's line or on the
first line of its statement; `# torchlint: noqa` or `# torchlint: noqa: TL601`
alone on a line, for the whole file. The engine drops the findings they
silence, and the editor reads and writes the same comments (hover, "disable
for this line"), so what the editor writes is what the engine honours.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from torchlint.findings import Finding

_CODES = r"(?P<codes>[A-Z]+[0-9]+(?:[ \t]*,[ \t]*[A-Z]+[0-9]+)*)"
_LINE = re.compile(rf"#\s*noqa(?::[ \t]*{_CODES})?", re.I)
_FILE = re.compile(rf"^[ \t]*#[ \t]*torchlint:[ \t]*noqa(?::[ \t]*{_CODES})?[ \t]*$", re.I | re.M)


@dataclass(frozen=True)
class Code:
    """A rule code written in a comment, with its columns (0-based, end exclusive) on the line."""

    code: str
    start: int
    end: int


@dataclass(frozen=True)
class Comment:
    """One `# noqa` comment on a line; `codes` is None for a bare `# noqa`, which silences every code."""

    codes: tuple[Code, ...] | None
    end: int  # the column just after the comment's last code (or after `noqa`)

    def silences(self, code: str) -> bool:
        return self.codes is None or any(c.code == code for c in self.codes)


def _comment(match: re.Match[str]) -> Comment:
    if match.group("codes") is None:
        return Comment(None, match.end())
    codes = []
    at = match.start("codes")
    for part in match.group("codes").split(","):
        lead = len(part) - len(part.lstrip())
        name = part.strip()
        codes.append(Code(name.upper(), at + lead, at + lead + len(name)))
        at += len(part) + 1
    return Comment(tuple(codes), match.end())


def comments(line: str) -> Iterator[Comment]:
    """Every `# noqa` comment on one line, in order."""
    return (_comment(m) for m in _LINE.finditer(line))


def comment(line: str) -> Comment | None:
    """The `# noqa` comment that counts on one line: the first."""
    return next(comments(line), None) if "noqa" in line.lower() else None


def with_code(line: str, code: str) -> str | None:
    """`line` with `code` added to its `# noqa` (a new comment if it has none); None if already silenced."""
    found = comment(line)
    if found is None:
        body = line.rstrip()
        return body + ("  " if body else "") + f"# noqa: {code}"
    if found.silences(code):
        return None
    return line[: found.end] + f", {code}" + line[found.end :]


def file_codes(text: str) -> frozenset[str] | None:
    """The codes silenced for the whole file (None: every code)."""
    codes: set[str] = set()
    for match in _FILE.finditer(text):
        found = _comment(match)
        if found.codes is None:
            return None
        codes.update(c.code for c in found.codes)
    return frozenset(codes)


def suppress(text: str, findings: list[Finding]) -> list[Finding]:
    """The findings no `# noqa` in `text` silences."""
    if not findings or "noqa" not in text:
        return findings
    from torchlint.engine.core.source import split_lines  # not at import: the engine loads libcst

    whole_file = file_codes(text)
    lines = split_lines(text)

    def silenced(f: Finding) -> bool:
        if whole_file is None or f.code in whole_file:
            return True
        for n in {f.line, f.statement_line}:
            found = comment(lines[n - 1]) if 1 <= n <= len(lines) else None
            if found is not None and found.silences(f.code):
                return True
        return False

    return [f for f in findings if not silenced(f)]
