"""Re-parse only what changed: a cache of parsed top-level statements.

An editor sends the whole document on every keystroke, and libcst parsing is
the bulk of a lint. The text is cut into top-level statements (CPython's own
parser finds them, ~6% of a libcst parse), each chunk is parsed on its own and
cached by its text, and the chunks are assembled into one Module. The result
must regenerate the exact input text; anything else (odd indentation, a
comment that belongs to a block's footer) falls back to a whole-file parse, so
the tree handed to rules always regenerates the exact text (tests/test_incremental.py
checks this over the fixtures and torch's own sources).

The cuts themselves are found incrementally too: when an edit stays inside one
top-level chunk of the last text and that chunk still parses on its own, ending
with its last statement, only it goes through CPython's parser. Top-level
statements start at column 0 with nothing open, so the whole text then parses
exactly when its chunks do, and this also answers the syntax check (a full
CPython parse of a 3,000-line file is ~15% of its lint).
"""

from __future__ import annotations

import ast
import warnings
from bisect import bisect_left, bisect_right
from collections import OrderedDict

import libcst as cst

from torchlint.engine.core.source import SourceError, line_offsets, python_ast, syntax_error
from torchlint.engine.semantic import call_sites

_REFUSED = (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError)


def _cuts(text: str) -> list[int] | None:
    """0-based line indexes where each top-level chunk starts; None if CPython cannot parse."""
    try:
        return _starts(python_ast(text))
    except _REFUSED:
        return None


def _starts(tree: ast.Module) -> list[int]:
    cuts = [0]
    previous_end = None
    for stmt in tree.body:
        if previous_end is not None and stmt.lineno > previous_end:
            cuts.append(previous_end)  # comments and blank lines go with the statement below
        previous_end = stmt.end_lineno
    return cuts


def _common_prefix(a: str, b: str) -> int:
    n, i, step = min(len(a), len(b)), 0, 4096
    while i + step <= n and a[i : i + step] == b[i : i + step]:
        i += step
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _common_suffix(a: str, b: str, limit: int) -> int:
    n, i, step = min(len(a), len(b)) - limit, 0, 4096
    while i + step <= n and a[len(a) - i - step : len(a) - i] == b[len(b) - i - step : len(b) - i]:
        i += step
    while i < n and a[len(a) - i - 1] == b[len(b) - i - 1]:
        i += 1
    return i


def _line_after(starts: list[int], first: int, common_from: int) -> int | None:
    """The first line after `first` whose start, and the newline before it, lie in the common suffix."""
    i = max(bisect_left(starts, common_from + 1), first + 1)
    return i if i < len(starts) else None


def _edited_cuts(old: str, old_cuts: list[int], new: str) -> list[int] | None:
    """The cuts of `new` from those of `old`, when the edit stays inside one chunk that still parses alone
    and still ends with its last statement; None when only a whole parse can tell."""
    old_starts, new_starts = line_offsets(old), line_offsets(new)
    prefix = _common_prefix(old, new)
    suffix = _common_suffix(old, new, prefix)
    first = bisect_right(old_starts, prefix) - 1  # the first line the edit touches
    # the first line after the edit in each text: its whole line, newline before it included, is common
    old_after = _line_after(old_starts, first, len(old) - suffix)
    new_after = _line_after(new_starts, first, len(new) - suffix)
    k = bisect_right(old_cuts, first) - 1
    last = k == len(old_cuts) - 1
    if not last and (old_after is None or old_after > old_cuts[k + 1]):
        return None  # the edit reaches into the next chunk
    delta = len(new_starts) - len(old_starts)
    if not last and (new_after is None or new_after > old_cuts[k + 1] + delta):
        return None
    start = new_starts[old_cuts[k]]
    end = len(new) if last else new_starts[old_cuts[k + 1] + delta]
    chunk = new[start:end]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(chunk)
    except _REFUSED:
        return None
    lines = old_cuts[k + 1] + delta - old_cuts[k] if not last else None
    if not tree.body or (lines is not None and tree.body[-1].end_lineno != lines):
        return None  # comments after its last statement would belong to the next chunk
    inner = [old_cuts[k] + c for c in _starts(tree)]
    return old_cuts[:k] + inner + [c + delta for c in old_cuts[k + 1 :]]


class ChunkParser:
    """Parses documents, re-using the statements of chunks it has seen before."""

    def __init__(self, max_chars: int = 400_000) -> None:
        # Bounded by source size (a tree costs a few hundred bytes per character):
        # the least recently used chunks go first, so open documents stay cached.
        self._cache: OrderedDict[str, cst.Module] = OrderedDict()
        self.max_chars = max_chars
        self._chars = 0
        self.reused = 0  # chunks taken from the cache (for tests and measurements)
        self.fallbacks = 0  # documents that had to be parsed whole
        self.whole_checks = 0  # texts CPython had to parse whole to find their cuts
        self._known: tuple[str, list[int]] | None = None  # the last text whose cuts are known, and its cuts
        self.call_site_parts: call_sites.Parts = {}  # the call index of the statements of the last tree
        self._moved: dict[
            int, tuple[cst.Module, list[cst.SimpleStatementLine | cst.BaseCompoundStatement]]
        ] = {}  # id(chunk) -> as a later chunk

    def _chunk(self, text: str) -> cst.Module:
        module = self._cache.get(text)
        if module is not None:
            self._cache.move_to_end(text)
            self.reused += 1
            return module
        module = cst.parse_module(text)
        self._cache[text] = module
        self._chars += len(text)
        while self._chars > self.max_chars and len(self._cache) > 1:
            old, dropped = self._cache.popitem(last=False)
            self._chars -= len(old)
            self._moved.pop(id(dropped), None)
        return module

    def _later(self, chunk: cst.Module) -> list[cst.SimpleStatementLine | cst.BaseCompoundStatement]:
        """The chunk's statements as they sit after other statements: its header (comments and blank lines)
        becomes its first statement's leading lines. Made once per chunk, so an unchanged statement is the
        same object in every tree (the call index keeps its part by that object)."""
        known = self._moved.get(id(chunk))
        if known is not None and known[0] is chunk:
            return known[1]
        stmts = list(chunk.body)
        if chunk.header:
            stmts[0] = stmts[0].with_changes(leading_lines=[*chunk.header, *stmts[0].leading_lines])
        self._moved[id(chunk)] = (chunk, stmts)
        return stmts

    def _whole(self, text: str) -> cst.Module:
        self.fallbacks += 1
        return cst.parse_module(text)

    def cuts(self, text: str) -> list[int] | None:
        """Where each top-level chunk of `text` starts; None when CPython refuses the text."""
        known = self._known
        if known is not None and known[0] == text:
            return known[1]
        found = _edited_cuts(*known, text) if known is not None else None
        if found is None:
            self.whole_checks += 1
            found = _cuts(text)
        if found is not None:
            self._known = (text, found)
        return found

    def syntax_error(self, text: str) -> SourceError | None:
        """`source.syntax_error`, answered from the chunks when the text is cut incrementally."""
        return None if self.cuts(text) is not None else syntax_error(text)

    def parse(self, text: str) -> cst.Module:
        """A Module equal (as code) to parsing `text` whole; raises like cst.parse_module."""
        cuts = self.cuts(text)
        if cuts is None or len(cuts) < 3:
            return self._whole(text)
        starts = line_offsets(text)
        bounds = [starts[c] for c in cuts] + [len(text)]
        texts = [text[a:b] for a, b in zip(bounds, bounds[1:])]
        try:
            chunks = [self._chunk(t) for t in texts]
        except cst.ParserSyntaxError:
            return self._whole(text)  # positions of the error must be the whole file's
        # Blocks that do not spell out their indent use the module's default, so every
        # chunk with indented lines must agree on it (and all on the newline style);
        # then each statement generates the same text in the assembled module.
        indents = {c.default_indent for c, t in zip(chunks, texts) if "\n " in t or "\n\t" in t}
        if len(indents) > 1 or len({c.default_newline for c in chunks}) > 1:
            return self._whole(text)
        body = list(chunks[0].body)
        for chunk in chunks[1:]:
            if not chunk.body or (chunk.footer and chunk is not chunks[-1]):
                return self._whole(text)
            body.extend(self._later(chunk))
        first, last = chunks[0], chunks[-1]
        return cst.Module(
            body=body,
            header=first.header,
            footer=last.footer,
            encoding=first.encoding,
            default_indent=indents.pop() if indents else first.default_indent,
            default_newline=first.default_newline,
            has_trailing_newline=last.has_trailing_newline,
        )
