"""Hover on a rule code inside a `# noqa:` comment shows that rule's docs."""

from __future__ import annotations

from lsprotocol import types

from torchlint import noqa
from torchlint.lsp import documents
from torchlint.lsp.coordinates import LineIndex
from torchlint.lsp.session import Session


def hover(session: Session, params: types.HoverParams) -> types.Hover | None:
    text = documents.source(session.workspace, params.text_document.uri)
    if text is None:
        return None
    return noqa_hover(text, params.position, documents.encoding(session.workspace))


def noqa_hover(text: str, pos: types.Position, encoding: str) -> types.Hover | None:
    idx = LineIndex(text, encoding)
    if not 0 <= pos.line < len(idx.lines):
        return None
    line_no, column = idx.from_lsp(pos)
    for comment in noqa.comments(idx.lines[line_no - 1]):
        for code in comment.codes or ():
            if code.start < column <= code.end + 1:
                from torchlint.docs import rule_markdown
                from torchlint.registry import rules

                cls = rules().get(code.code)
                if cls is None:
                    return None
                return types.Hover(
                    types.MarkupContent(types.MarkupKind.Markdown, rule_markdown(cls)),
                    idx.range(line_no, code.start + 1, line_no, code.end + 1),
                )
    return None
