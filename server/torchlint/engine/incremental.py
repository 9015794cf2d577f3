"""Re-parse only what changed: a cache of parsed top-level statements.

An editor sends the whole document on every keystroke, and libcst parsing is
the bulk of a lint. The text is cut into top-level statements (CPython's own
parser finds them, ~6% of a libcst parse), each chunk is parsed on its own and
cached by its text, and the chunks are assembled into one Module. The result
must regenerate the exact input text; anything else (odd indentation, a
comment that belongs to a block's footer) falls back to a whole-file parse, so
the tree handed to rules always regenerates the exact text (tests/test_incremental.py
checks this over the fixtures and torch's own sources).
"""

from __future__ import annotations

from collections import OrderedDict

import libcst as cst

from torchlint.engine.source import line_offsets, python_ast


def _cuts(text: str) -> list[int] | None:
    """0-based line indexes where each top-level chunk starts; None if CPython cannot parse."""
    try:
        tree = python_ast(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return None
    cuts = [0]
    previous_end = None
    for stmt in tree.body:
        if previous_end is not None and stmt.lineno > previous_end:
            cuts.append(previous_end)  # comments and blank lines go with the statement below
        previous_end = stmt.end_lineno
    return cuts


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
            old, _ = self._cache.popitem(last=False)
            self._chars -= len(old)
        return module

    def _whole(self, text: str) -> cst.Module:
        self.fallbacks += 1
        return cst.parse_module(text)

    def parse(self, text: str) -> cst.Module:
        """A Module equal (as code) to parsing `text` whole; raises like cst.parse_module."""
        cuts = _cuts(text)
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
            stmts = list(chunk.body)
            if not stmts or (chunk.footer and chunk is not chunks[-1]):
                return self._whole(text)
            if chunk.header:
                stmts[0] = stmts[0].with_changes(leading_lines=[*chunk.header, *stmts[0].leading_lines])
            body.extend(stmts)
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
