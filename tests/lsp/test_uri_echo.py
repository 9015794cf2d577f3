"""The server answers under the URI string the client sent: clients compare URIs as strings."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from lsp_session import BUGGY, FIXED, apply, edits_for, session
from lsprotocol import types

pytestmark = pytest.mark.asyncio


async def test_a_plus_in_the_path_round_trips(project):
    folder = project / "a+b"
    folder.mkdir()
    sent = "file://" + quote(str(folder / "train.py"))  # `+` encoded as %2B, as VS Code sends it
    assert "%2B" in sent
    async with session(project) as s:
        s.versions[sent] = 1
        s.client.text_document_did_open(
            types.DidOpenTextDocumentParams(types.TextDocumentItem(sent, "python", 1, BUGGY))
        )
        (diag,) = await s.diagnostics(sent, lambda d: len(d) == 1)
        assert {p.uri for p in s.published} == {sent}  # never under a re-encoded `a+b`
        actions = await s.client.text_document_code_action_async(
            types.CodeActionParams(types.TextDocumentIdentifier(sent), diag.range, types.CodeActionContext([diag]))
        )
        fix = next(a for a in actions if a.kind == types.CodeActionKind.QuickFix and a.is_preferred)
        assert apply(BUGGY, edits_for(fix.edit, sent)) == FIXED  # the edit names the document as sent
        s.change(sent, FIXED)
        assert await s.diagnostics(sent, lambda d: len(d) == 0) == []
        s.client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(sent)))
        assert {p.uri for p in s.published} == {sent}
