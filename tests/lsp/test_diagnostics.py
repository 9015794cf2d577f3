"""Diagnostics over the wire: on open, on change, cleared by a fix; UTF-16 ranges;
syntax errors mid-edit; a burst of edits ends with the last version only."""

from __future__ import annotations

import asyncio

import pytest
from lsp_session import BUGGY, FIXED, PUSH, progress, session
from lsprotocol import types
from pygls.exceptions import JsonRpcException

pytestmark = pytest.mark.asyncio


async def test_open_change_fix_clears(project):
    async with session(project) as s:
        u = s.open(project / "train.py", BUGGY)
        diags = await s.diagnostics(u, lambda d: len(d) == 1)
        d = diags[0]
        assert d.code == "TL101" and d.source == "torchlint"
        assert d.severity == types.DiagnosticSeverity.Error
        assert d.code_description.href.endswith("/docs/rules/TL101.md")
        assert (d.range.start.line, d.range.start.character) == (3, 0)
        assert d.data["fixes"][0]["edits"][0][5] == "    optimizer.zero_grad()\n"

        s.change(u, FIXED)
        assert await s.diagnostics(u, lambda d: len(d) == 0) == []  # cleared by the fix
        s.change(u, BUGGY)
        assert [d.code for d in await s.diagnostics(u, lambda d: len(d) == 1)] == ["TL101"]


async def test_the_first_lint_shows_analysing_progress_until_its_diagnostics(project):
    """The first lint loads the engine and reads the project (19.5 s on a loaded machine): the editor
    shows "analysing" from its start to the first diagnostics, and later lints show nothing."""
    async with session(project) as s:
        u = s.open(project / "train.py", BUGGY)
        await s.diagnostics(u, lambda d: len(d) == 1)
        (reports,) = progress(s.client, "torchlint: analysing")
        assert [r.kind for r in reports][0] == "begin" and not reports[0].cancellable
        for _ in range(100):  # the end follows the diagnostics
            if reports[-1].kind == "end":
                break
            await asyncio.sleep(0.05)
        assert reports[-1].kind == "end"
        s.change(u, FIXED)
        await s.diagnostics(u, lambda d: len(d) == 0)
        assert len(progress(s.client, "torchlint: analysing")) == 1


async def test_an_edit_during_the_first_lint_hands_the_progress_to_the_next_lint(project):
    """Typing while the first lint runs replaces it; the lint that replaces it (queued behind it on the
    lint thread) shows "analysing" in its turn, rather than seconds of nothing."""
    filler = "".join(f"def f{i}(x):\n    return torch.relu(x) * {i}\n\n\n" for i in range(1500))
    async with session(project) as s:
        u = s.open(project / "train.py", BUGGY + filler)  # seconds to lint the first time
        while not progress(s.client, "torchlint: analysing"):
            await asyncio.sleep(0.01)
        s.change(u, FIXED + filler)  # arrives while the first lint runs
        await s.diagnostics(u, lambda d: len(d) == 0)
        shown = progress(s.client, "torchlint: analysing")
        assert len(shown) == 2, shown
        for _ in range(100):
            if all(r[-1].kind == "end" for r in shown):
                break
            await asyncio.sleep(0.05)
        assert all(r[-1].kind == "end" for r in shown)


async def test_utf16_columns_after_chinese_and_emoji(project):
    text = 'import torch\nnote = "中文😀"; sd = torch.load("m.pt")  # 加载\n'
    async with session(project) as s:
        u = s.open(project / "load.py", text)
        (d,) = await s.diagnostics(u, lambda d: len(d) == 1)
        line = text.splitlines()[1]
        start = line.index("torch.load")
        # 😀 is two UTF-16 code units: the column is one more than the code-point index
        assert d.range.start == types.Position(1, start + 1)
        assert d.range.end == types.Position(1, len(line[: line.index(")") + 1]) + 1)


async def test_utf8_when_the_client_prefers_it(project):
    caps = types.ClientCapabilities(
        general=types.GeneralClientCapabilities(position_encodings=[types.PositionEncodingKind.Utf8]),
        workspace=PUSH.workspace,
        window=PUSH.window,
    )
    text = 'import torch\nnote = "中"; sd = torch.load("m.pt")\n'
    async with session(project, capabilities=caps) as s:
        u = s.open(project / "load.py", text)
        (d,) = await s.diagnostics(u, lambda d: len(d) == 1)
        line = text.splitlines()[1]
        assert d.range.start.character == len(line[: line.index("torch.load")].encode("utf-8"))


async def test_syntax_error_mid_edit_keeps_serving(project):
    async with session(project) as s:
        u = s.open(project / "train.py", BUGGY)
        (good,) = await s.diagnostics(u, lambda d: len(d) == 1)
        broken = BUGGY.replace("loss.backward()", "loss.backward(")
        s.change(u, broken)
        diags = await s.diagnostics(u, lambda d: "TL000" in [x.code for x in d])
        error = next(d for d in diags if d.code == "TL000")
        assert error.message == "syntax error: '(' was never closed"
        assert error.range.start == types.Position(5, len("    loss.backward"))  # where CPython puts it
        # the finding of the unchanged loop header stays where it was
        assert [(d.code, d.range) for d in diags if d.code != "TL000"] == [("TL101", good.range)]
        s.change(u, BUGGY)
        assert [d.code for d in await s.diagnostics(u, lambda d: [x.code for x in d] == ["TL101"])] == ["TL101"]


async def test_rapid_edits_publish_only_current_versions(project):
    def text(k: int) -> str:
        return "\n" * (k % 7) + (BUGGY if k % 2 == 0 else FIXED)

    async with session(project) as s:
        u = s.open(project / "train.py", text(1))
        await s.diagnostics(u, lambda d: len(d) == 0)
        start = len(s.published)
        for _ in range(199):  # versions 2..200
            s.change(u, text(s.versions[u] + 1))
        last = s.versions[u]
        assert last == 200
        await s.diagnostics(u, lambda d: len(d) == 1 and s.published[-1].version == last)
        burst = [p for p in s.published[start:] if p.uri == u]
        assert burst[-1].version == last
        for p in burst:  # whatever was published matches the text of the version it names
            expected = [(p.version % 7) + 3] if p.version % 2 == 0 else []
            assert [d.range.start.line for d in p.diagnostics] == expected, p.version
        assert len(burst) < 50  # debounced: not one lint per keystroke


async def test_binary_huge_and_unknown_documents_do_not_crash(project):
    async with session(project) as s:
        bad = s.open(project / "nul.py", "x = 1\x00\x01\x02\n")
        diags = await s.diagnostics(bad)
        assert all(d.code == "TL000" for d in diags)
        # edits to a document that was never opened, and requests about unknown URIs
        s.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(2, "file:///nowhere/x.py"),
                [types.TextDocumentContentChangeWholeDocument("x")],
            )
        )
        hover = await s.client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier("file:///nowhere/x.py"), types.Position(0, 0))
        )
        assert hover is None
        actions = await s.client.text_document_code_action_async(
            types.CodeActionParams(
                types.TextDocumentIdentifier("untitled:Untitled-1"),
                types.Range(types.Position(0, 0), types.Position(0, 0)),
                types.CodeActionContext([]),
            )
        )
        assert actions is not None and len(actions) == 0
        huge = s.open(project / "huge.py", BUGGY + "x = 1\n" * 200_000)
        assert await s.diagnostics(huge) == []  # too large to lint: skipped, not hung on
        assert any("huge.py: not linted" in m.message for m in s.client.log_messages)
        # still alive and correct afterwards
        u = s.open(project / "train.py", BUGGY)
        assert [d.code for d in await s.diagnostics(u, lambda d: len(d) == 1)] == ["TL101"]


async def test_bad_params_get_an_error_response(project):
    async with session(project) as s:
        # raw JSON: the client library would refuse to send these params itself
        future = asyncio.get_running_loop().create_future()
        s.client.protocol._request_futures["bad-1"] = future
        s.client.protocol._send_data(
            {"jsonrpc": "2.0", "id": "bad-1", "method": "textDocument/hover", "params": {"textDocument": 42}}
        )
        with pytest.raises(JsonRpcException) as exc:
            await asyncio.wait_for(future, 30)
        assert exc.value.code == -32602 and "textDocument/hover" in exc.value.message
        s.client.protocol._send_data(
            {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": 1}}
        )
        s.client.protocol._send_data({"jsonrpc": "2.0", "method": "no/such/method", "params": None})
        u = s.open(project / "train.py", BUGGY)
        assert [d.code for d in await s.diagnostics(u, lambda d: len(d) == 1)] == ["TL101"]
