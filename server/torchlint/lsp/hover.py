"""Hover on a rule code inside a `# noqa:` comment shows that rule's docs."""

from __future__ import annotations

from lsprotocol import types

from torchlint.lsp.edits import NOQA
from torchlint.lsp.positions import LineIndex


def noqa_hover(text: str, pos: types.Position, encoding: str) -> types.Hover | None:
    idx = LineIndex(text, encoding)
    if not 0 <= pos.line < len(idx.lines):
        return None
    line_no, column = idx.from_lsp(pos)
    line = idx.lines[line_no - 1]
    for m in NOQA.finditer(line):
        if not m.group("codes"):
            continue
        start = m.start("codes")
        for part in m.group("codes").split(","):
            lead = len(part) - len(part.lstrip())
            code = part.strip().upper()
            begin, end = start + lead, start + lead + len(code)
            start += len(part) + 1
            if begin < column <= end + 1:
                from torchlint.docs import rule_markdown
                from torchlint.registry import rules

                cls = rules().get(code)
                if cls is None:
                    return None
                return types.Hover(
                    types.MarkupContent(types.MarkupKind.Markdown, rule_markdown(cls)),
                    idx.range(line_no, begin + 1, line_no, end + 1),
                )
    return None
