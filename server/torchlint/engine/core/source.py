"""Turning bytes on disk into text the parser can take, and back.

A file that cannot be decoded is not an exception for the caller: `decode`
raises `SourceError` carrying a position, which the runner turns into TL000.
"""

from __future__ import annotations

import ast
import codecs
import io
import re
import tokenize
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from torchlint.findings import Edit

_NEWLINE = re.compile(r"\r\n|\r|\n")


class SourceError(Exception):
    """The file is not Python source we can read; carries where and why."""

    def __init__(
        self,
        message: str,
        line: int = 1,
        column: int = 1,
        end_line: int = 0,
        end_column: int = 0,
        too_deep: bool = False,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column
        self.end_line = end_line or line
        self.end_column = end_column or column
        self.too_deep = too_deep  # nesting libcst must never see (see syntax_error)

    def within(self, lines: list[str]) -> SourceError:
        """The same error, its range moved into `lines`: never past the last line or a line's end."""

        def clamp(line: int, column: int) -> tuple[int, int]:
            line = min(max(line, 1), max(len(lines), 1))
            return line, min(max(column, 1), len(lines[line - 1]) + 1 if lines else 1)

        start, end = clamp(self.line, self.column), clamp(self.end_line, self.end_column)
        return SourceError(self.message, *start, *max(start, end), too_deep=self.too_deep)


@dataclass(frozen=True)
class Source:
    text: str
    encoding: str  # as declared/detected, e.g. "utf-8", "utf-8-sig", "latin-1"

    def encode(self, text: str) -> bytes:
        return text.encode(self.encoding)


def decode(data: bytes) -> Source:
    if b"\x00" in data:
        before = data[: data.index(b"\x00")]
        line = before.count(b"\n") + 1
        column = len(before) - (before.rfind(b"\n") + 1) + 1
        raise SourceError("file contains NUL bytes (binary file?)", line, column)
    declaration_error = None
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:  # undecodable first lines, or an unknown codec named
        encoding, declaration_error = "utf-8", exc
    try:
        text = data.decode(encoding)
        if declaration_error is not None:
            raise SourceError(f"bad encoding declaration: {declaration_error}", 1)
    except UnicodeDecodeError as exc:
        before = data[: exc.start]
        line = before.count(b"\n") + 1
        column = len(before) - (before.rfind(b"\n") + 1) + 1
        name = codecs.lookup(encoding).name
        raise SourceError(
            f"cannot decode byte 0x{data[exc.start]:02x} as {name} "
            "(add a '# -*- coding: ...' line or re-save the file as UTF-8)",
            line,
            column,
        ) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return Source(text, encoding)


def syntax_error(text: str) -> SourceError | None:
    """Why Python's own parser refuses `text`, with its message and range, or None.

    Its positions are where the error is (`return x +` on line 4 is line 4),
    while libcst's are where its parser gave up, often lines later; and its
    messages are short ("'(' was never closed") where libcst lists tokens.

    Nesting CPython refuses for depth is marked `too_deep`: libcst's native
    parser has no depth limit, so a few thousand nested brackets, unary
    operators or `a.b.b...` links overflow its C stack and kill the whole
    process (CLI, language server), and its time grows ~cubically long before
    that. CPython's parser (about 6% of a libcst parse) stops at fixed limits.
    """
    try:
        python_ast(text)
    except SyntaxError as exc:
        too_deep = "too many nested" in str(exc.msg)
        message = f"{exc.msg} (Python's parser allows 200 levels)" if too_deep else f"syntax error: {exc.msg}"
        end: tuple[int, int] = (
            (exc.end_lineno, exc.end_offset) if exc.end_lineno and exc.end_offset and exc.end_offset > 0 else (0, 0)
        )
        lines = split_lines(text)
        if len(lines) > 1 and lines[-1] == "":
            lines.pop()  # the end of the last line, not the empty line after it
        return SourceError(message, exc.lineno or 1, exc.offset or 1, *end, too_deep=too_deep).within(lines)
    except (RecursionError, MemoryError):
        return SourceError("expression nested too deeply: Python's own parser gives up on it", too_deep=True)
    except ValueError:  # e.g. NUL bytes; decode() reports those
        return None
    return None


def python_ast(text: str) -> ast.Module:
    """CPython's tree of `text`, raising as `ast.parse` does (warnings such as invalid escapes are
    not ours to report). The last two texts' results are kept: the syntax check, the editor's
    incremental parser and the file's own summary all ask about the same text, and a tree of a
    3,000-line file weighs ~6 MB, which the language server should not hoard."""
    found = _python_parse(text)
    if isinstance(found, BaseException):
        raise found.with_traceback(None)
    return found


@lru_cache(maxsize=2)
def _python_parse(text: str) -> ast.Module | BaseException:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError) as exc:
        return exc


def line_offsets(text: str) -> list[int]:
    """Offset of the start of each line, splitting exactly where Python does."""
    offsets = [0]
    offsets.extend(m.end() for m in _NEWLINE.finditer(text))
    return offsets


def split_lines(text: str) -> list[str]:
    """Lines without their endings, numbered as the parser numbers them."""
    return _NEWLINE.split(text)


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """Apply non-overlapping edits (1-based line/column, end exclusive)."""
    starts = line_offsets(text)

    def offset(line: int, column: int) -> int:
        if line > len(starts):  # just past the last line of a file without final newline
            return len(text)
        return starts[line - 1] + column - 1

    out = []
    pos = 0
    for e in sorted(edits, key=lambda e: (e.line, e.column, e.end_line, e.end_column)):
        begin, end = offset(e.line, e.column), offset(e.end_line, e.end_column)
        if begin < pos:
            raise ValueError("overlapping edits")
        out.append(text[pos:begin])
        out.append(e.content)
        pos = end
    out.append(text[pos:])
    return "".join(out)
