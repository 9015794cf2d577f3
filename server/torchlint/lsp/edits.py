"""Text edits the server hands to the client: a diagnostic's fix (from its
`data`), `# noqa` comments, and all safe fixes of a file at once."""

from __future__ import annotations

import io
import re
import tokenize

from lsprotocol import types

from torchlint.lsp.documents import Snapshot
from torchlint.lsp.positions import LineIndex
from torchlint.lsp.settings import Selection

NOQA = re.compile(r"#\s*noqa(?P<colon>:[ \t]*(?P<codes>[A-Z]+[0-9]+(?:[ \t]*,[ \t]*[A-Z]+[0-9]+)*))?", re.I)


def from_data(edits: list) -> dict[str, list[types.TextEdit]]:
    """The compact edits stored in a diagnostic's data, grouped by document."""
    out: dict[str, list[types.TextEdit]] = {}
    for uri, sl, sc, el, ec, text in edits:
        rng = types.Range(types.Position(int(sl), int(sc)), types.Position(int(el), int(ec)))
        out.setdefault(str(uri), []).append(types.TextEdit(rng, str(text)))
    return out


def workspace_edit(
    changes: dict[str, list[types.TextEdit]], versions: dict[str, int | None] | None
) -> types.WorkspaceEdit:
    """`documentChanges` (version-checked) when the client takes them, else `changes`."""
    if versions is None:
        return types.WorkspaceEdit(changes=changes)
    return types.WorkspaceEdit(
        document_changes=[
            types.TextDocumentEdit(types.OptionalVersionedTextDocumentIdentifier(uri, versions.get(uri)), edits)
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
    lines = LineIndex(text, encoding).lines
    for n in lines0:
        if not 0 <= n < len(lines):
            continue
        line = lines[n]
        m = NOQA.search(line)
        if m:
            if not m.group("colon"):
                return None  # a bare `# noqa` already silences everything
            codes = [c.strip().upper() for c in m.group("codes").split(",")]
            if code in codes:
                return None
            new = line[: m.end("codes")] + f", {code}" + line[m.end("codes") :]
        else:
            body = line.rstrip()
            if body.endswith("\\") or _inside_string(text, n + 1):
                continue
            new = body + ("  " if body else "") + f"# noqa: {code}"
        idx = LineIndex(text, encoding)
        return types.TextEdit(idx.range(n + 1, 1, n + 1, len(line) + 1), new)
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


def fix_all(snap: Snapshot, sel: Selection) -> tuple[dict[str, list[types.TextEdit]], int]:
    """Every safe fix in the document (or notebook), as one edit per changed document or cell."""
    if sel.config_error or not sel.rules:
        return {}, 0
    from torchlint.engine import fix_text

    fixed = fix_text(snap.path, snap.text, list(sel.rules))
    if not fixed.applied or fixed.text == snap.text:
        return {}, 0
    if snap.program is None:
        return {snap.key: [_trimmed(snap.text, fixed.text, snap.encoding)]}, fixed.applied
    sources = snap.program.split(fixed.text)
    if sources is None:
        return {}, 0
    out = {}
    for index, part in snap.cells.items():
        new = sources.get(index, part.text)
        if new != part.text:
            out[part.uri] = [_trimmed(part.text, new, snap.encoding)]
    return out, fixed.applied
