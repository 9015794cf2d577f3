"""An opened file's own findings are published at once; findings that need the whole project's import
index follow when the index, built in the background from start-up, is ready."""

from __future__ import annotations

import asyncio
import shutil
import sys

import pytest
from lsp_session import session
from lsprotocol import types

from fixture_expectations import FIXTURES

pytestmark = pytest.mark.asyncio

# The server with an index that takes 0.25 s a file to build (a big project on a slow disk).
SLOW_INDEX = """
import sys, time
import torchlint.engine.semantic.import_index as index
from torchlint.cli import main
fast = index.facts
def slow(text):
    time.sleep(0.25)
    return fast(text)
index.facts = slow
sys.exit(main(["server"]))
"""


async def test_own_findings_before_the_index_then_project_findings(project):
    shutil.copytree(FIXTURES / "projects" / "ddp_no_init" / "trainkit", project / "trainkit")
    for i in range(16):
        (project / "trainkit" / f"part{i}.py").write_text(f"def helper{i}():\n    return {i}\n")
    trainer = project / "trainkit" / "trainer.py"
    text = trainer.read_text(encoding="utf-8").replace("                self.opt.zero_grad()\n", "")
    async with session(project, command=[sys.executable, "-c", SLOW_INDEX]) as s:
        u = s.open(trainer, text)
        first = await s.diagnostics(u, lambda d: len(d) > 0)
        # TL101 is the file's own; TL402 needs every project file (does any set up the process group?)
        assert [d.code for d in first] == ["TL101"]
        later = await s.diagnostics(u, lambda d: len(d) == 2)
        assert sorted(d.code for d in later) == ["TL101", "TL402"]
        published = [p for p in s.published if p.uri == u]
        assert [sorted(d.code for d in p.diagnostics) for p in published] == [["TL101"], ["TL101", "TL402"]]


async def test_a_pulling_client_is_asked_to_pull_again_when_the_index_is_ready(project):
    shutil.copytree(FIXTURES / "projects" / "ddp_no_init" / "trainkit", project / "trainkit")
    for i in range(16):
        (project / "trainkit" / f"part{i}.py").write_text(f"def helper{i}():\n    return {i}\n")
    trainer = project / "trainkit" / "trainer.py"
    caps = types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(
            configuration=True, diagnostics=types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
        ),
        text_document=types.TextDocumentClientCapabilities(diagnostic=types.DiagnosticClientCapabilities()),
    )
    async with session(project, capabilities=caps, command=[sys.executable, "-c", SLOW_INDEX]) as s:
        refreshed = asyncio.Event()
        features = s.client.protocol.fm.features
        original = features[types.WORKSPACE_DIAGNOSTIC_REFRESH]

        def record(params):
            refreshed.set()
            return original(params)

        features[types.WORKSPACE_DIAGNOSTIC_REFRESH] = record
        u = s.open(trainer, trainer.read_text(encoding="utf-8"))
        params = types.DocumentDiagnosticParams(types.TextDocumentIdentifier(u))
        assert list((await s.client.text_document_diagnostic_async(params)).items) == []  # TL402 waits
        await asyncio.wait_for(refreshed.wait(), 60)
        assert [d.code for d in (await s.client.text_document_diagnostic_async(params)).items] == ["TL402"]
