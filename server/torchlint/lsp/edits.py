"""Text edits the server hands to the client: a diagnostic's fix (from its
`data`), `# noqa` comments, and all safe fixes of a file at once."""

from __future__ import annotations

import io
import tokenize
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from lsprotocol import types

from torchlint import noqa
from torchlint.lsp.coordinates import LineIndex
from torchlint.lsp.documents import Snapshot
from torchlint.lsp.settings import LintSetup


def from_data(edits: Iterable[Sequence[Any]]) -> dict[str, list[types.TextEdit]]:
    """The compact edits stored in a diagnostic's data, grouped by document."""
    out: dict[str, list[types.TextEdit]] = {}
    for uri, sl, sc, el, ec, text in edits:
        rng = types.Range(types.Position(int(sl), int(sc)), types.Position(int(el), int(ec)))
        out.setdefault(str(uri), []).append(types.TextEdit(rng, str(text)))
    return out


def workspace_edit(
    changes: Mapping[str, Sequence[types.TextEdit]], versions: Mapping[str, int | None] | None
) -> types.WorkspaceEdit:
    """`documentChanges` (version-checked) when the client takes them, else `changes`."""
    if versions is None:
        return types.WorkspaceEdit(changes={uri: list(edits) for uri, edits in changes.items()})
    return types.WorkspaceEdit(
        document_changes=[
            types.TextDocumentEdit(types.OptionalVersionedTextDocumentIdentifier(uri, versions.get(uri)), list(edits))
            for uri, edits in changes.items()
        ]
    )


def _inside_string(text: str, line: int) -> bool:
    """Whether the end of 1-based `line` is inside a multi-line string (or the text does not tokenize)."""
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.start[0] > line:
                return False
            if tok.type == tokenize.STRING and tok.start[0] <= line < tok.end[0]:
                return True
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return False
    return False


def noqa_edit(text: str, lines0: list[int], code: str, encoding: str) -> types.TextEdit | None:
    """Add `code` to the `# noqa` of the first line that can take a comment.

    None when the line already suppresses the code (or every code).
    """
    idx = LineIndex(text, encoding)
    for n in lines0:
        if not 0 <= n < len(idx.lines):
            continue
        line = idx.lines[n]
        if noqa.comment(line) is None and (line.rstrip().endswith("\\") or _inside_string(text, n + 1)):
            continue  # no comment can go at the end of this line
        new = noqa.with_code(line, code)
        return None if new is None else types.TextEdit(idx.range(n + 1, 1, n + 1, len(line) + 1), new)
    return None


def _trimmed(old: str, new: str, encoding: str) -> types.TextEdit:
    """One edit replacing only the changed middle of `old` (keeps the cursor where it was)."""
    p = 0
    limit = min(len(old), len(new))
    while p < limit and old[p] == new[p]:
        p += 1
    if 0 < p < len(old) and old[p - 1] == "\r" and old[p] == "\n":
        p -= 1
    s = 0
    while s < limit - p and old[-1 - s] == new[-1 - s]:
        s += 1
    end = len(old) - s
    if 0 < end < len(old) and old[end - 1] == "\r" and old[end] == "\n":
        s -= 1
    idx = LineIndex(old, encoding)

    def pos(offset: int) -> types.Position:
        before = LineIndex(old[:offset]).lines
        return idx.to_lsp(len(before), len(before[-1]) + 1)

    return types.TextEdit(types.Range(pos(p), pos(len(old) - s)), new[p : len(new) - s])


def fix_all(snap: Snapshot, setup: LintSetup, cell: str | None = None) -> tuple[dict[str, list[types.TextEdit]], int]:
    """Every safe fix in the document (or notebook), as one edit per changed document or cell,
    and how many fixes the whole program took. `cell`: only the edit of that notebook cell
    (the others are asked for on their own)."""
    if setup.config_error or not setup.rules:
        return {}, 0
    from torchlint.engine import fix_text

    fixed = fix_text(snap.path, snap.text, list(setup.rules), torch_version=setup.torch_version)
    if not fixed.applied or fixed.text == snap.text:
        return {}, 0
    if snap.program is None:
        return {snap.key: [_trimmed(snap.text, fixed.text, snap.encoding)]}, fixed.applied
    sources = snap.program.split(fixed.text)
    if sources is None:
        return {}, 0
    out: dict[str, list[types.TextEdit]] = {}
    for index, part in snap.cells.items():
        new = sources.get(index, part.text)
        if new != part.text and cell in (None, part.uri):
            out[part.uri] = [_trimmed(part.text, new, snap.encoding)]
    return out, fixed.applied if out else 0
