"""The editor's text changes, applied to the server's copy of a document.

The server takes ranged (incremental) changes: vscode-languageclient sends them
for notebook cells whatever the server asks for, and a replaced cell must never
become the typed fragment. Positions are LSP positions: lines end at `\\r\\n`,
`\\r` or `\\n` only (a form feed or U+2028 inside a string must not shift the
lines after it, as `str.splitlines` would), columns count units of the
negotiated encoding. A change whose range lies outside the text cannot be
applied: the caller then knows its copy is no longer the editor's.

A consistency check at debug level (`torchlint server -v`): a client that sends
the deprecated `rangeLength` (vscode-languageclient does) says how many UTF-16
units it replaced; a different count over the server's text means the two
texts already differ, and is logged (not acted on: some clients count
characters there).
"""

from __future__ import annotations

import logging
import re

from lsprotocol import types

log = logging.getLogger("torchlint.lsp")

_NEWLINE = re.compile(r"\r\n|\r|\n")


class OutOfSync(Exception):
    """A change that does not fit the text it is applied to."""


def _units(ch: str, encoding: str) -> int:
    if encoding == types.PositionEncodingKind.Utf32 or ch < "\x80":
        return 1
    if encoding == types.PositionEncodingKind.Utf8:
        return len(ch.encode("utf-8", "surrogatepass"))
    return 2 if ord(ch) > 0xFFFF else 1


def _offset(text: str, starts: list[int], ends: list[int], pos: types.Position, encoding: str) -> int:
    """The string offset of `pos`; a column past the end of its line means the line's end (as LSP says)."""
    if pos.line < 0 or pos.character < 0:
        raise OutOfSync(f"negative position {pos.line}:{pos.character}")
    if pos.line >= len(starts):
        if pos.line == len(starts) and pos.character == 0:
            return len(text)  # the start of the line after a text without a final newline
        raise OutOfSync(f"line {pos.line} is past the last line ({len(starts) - 1})")
    offset, end, units = starts[pos.line], ends[pos.line], 0
    while offset < end and units < pos.character:
        units += _units(text[offset], encoding)
        offset += 1
    return offset


def apply(text: str, change: types.TextDocumentContentChangeEvent, encoding: str) -> str:
    """`text` with `change` applied; raises OutOfSync when its range is not inside `text`."""
    if not isinstance(change, types.TextDocumentContentChangePartial):
        return change.text
    starts, ends = [0], []
    for m in _NEWLINE.finditer(text):
        ends.append(m.start())
        starts.append(m.end())
    ends.append(len(text))
    rng = change.range
    start = _offset(text, starts, ends, rng.start, encoding)
    end = _offset(text, starts, ends, rng.end, encoding)
    if end < start:
        raise OutOfSync(
            f"range ends before it starts: {rng.start.line}:{rng.start.character}-{rng.end.line}:{rng.end.character}"
        )
    if change.range_length is not None and encoding == types.PositionEncodingKind.Utf16:
        replaced = len(text[start:end].encode("utf-16-le", "surrogatepass")) // 2
        if replaced != change.range_length:
            log.debug(
                "change replaces %d UTF-16 units of the server's text, the client says %d",
                replaced,
                change.range_length,
            )
    return text[:start] + change.text + text[end:]
