"""Settings from pyproject.toml and from the client, broken config, pull mode,
notebooks (server and CLI), and the probe command."""

from __future__ import annotations

import ast
import asyncio
import json
import os
from pathlib import Path

import pytest
from lsp_session import BUGGY, FIXED, PUSH, apply, notebook_params, progress, session, uri
from lsprotocol import types

from selecting import extend_select

pytestmark = pytest.mark.asyncio
LOAD = 'import torch\nsd = torch.load("m.pt")\n'


async def test_pyproject_config_and_reload(project):
    (project / "pyproject.toml").write_text(
        '[tool.torchlint]\ntorch-version = "2.4"\nextend-select = ["TL601"]\nignore = ["TL101"]\n'
        'severity = { TL601 = "info" }\n'
    )
    async with session(project) as s:
        u = s.open(project / "train.py", BUGGY + LOAD)
        (d,) = await s.diagnostics(u, lambda d: len(d) == 1)
        assert d.code == "TL601" and d.severity == types.DiagnosticSeverity.Information
        (project / "pyproject.toml").write_text('[tool.torchlint]\ntorch-version = "2.4"\nextend-select = ["TL601"]\n')
        s.client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(
                [types.FileEvent(uri(project / "pyproject.toml"), types.FileChangeType.Changed)]
            )
        )
        diags = await s.diagnostics(u, lambda d: len(d) == 2)
        assert sorted(d.code for d in diags) == ["TL101", "TL601"]

        # a client that watches no files (Neovim 0.7): the next lint notices the change itself
        config = project / "pyproject.toml"
        config.write_text('[tool.torchlint]\ntorch-version = "2.4"\nselect = ["TL601"]\n')
        os.utime(config, (config.stat().st_atime, config.stat().st_mtime + 5))
        s.change(u, BUGGY + LOAD + "\n")
        assert [d.code for d in await s.diagnostics(u, lambda d: len(d) == 1)] == ["TL601"]


async def test_client_settings_select_severity_and_on_save(project):
    # the client's select replaces the configured one (a config's extend-select would still add to it)
    (project / "pyproject.toml").write_text('[tool.torchlint]\nselect = ["TL1", "TL601"]\n')
    settings = {"select": ["TL1"], "severity": {"TL101": "warning"}}
    async with session(project, settings=settings) as s:
        u = s.open(project / "train.py", BUGGY + LOAD)
        (d,) = await s.diagnostics(u, lambda d: len(d) == 1)
        assert d.code == "TL101" and d.severity == types.DiagnosticSeverity.Warning

        s.client.set_configuration({"run": "onSave"}, section="torchlint")
        s.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
        await s.diagnostics(u, lambda d: len(d) == 2)
        s.change(u, FIXED + LOAD)
        s.client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(u)))
        assert [d.code for d in await s.diagnostics(u, lambda d: len(d) == 1)] == ["TL601"]


async def test_severity_prefixes_in_client_settings_longest_match_wins(project):
    # config file: TL6 -> info; client: TL1 -> info and TL101 -> warning (the longer key wins)
    (project / "pyproject.toml").write_text(
        "[project]\nname = 'demo'\ndependencies = ['torch>=2.1']\n\n"
        + extend_select("TL601")
        + "[tool.torchlint.severity]\nTL6 = 'info'\n"
    )
    settings = {"severity": {"TL1": "info", "tl101": "warning", "TL9": "error"}}
    async with session(project, settings=settings) as s:
        u = s.open(project / "train.py", BUGGY + LOAD)
        diags = await s.diagnostics(u, lambda d: len(d) == 2)
        assert sorted((d.code, d.severity) for d in diags) == [
            ("TL101", types.DiagnosticSeverity.Warning),
            ("TL601", types.DiagnosticSeverity.Information),
        ]
        assert any("`torchlint.severity`" in m.message and "'TL9'" in m.message for m in s.client.messages)


async def test_show_syntax_errors_off_hides_tl000_and_keeps_the_findings(project):
    async with session(project, settings={"showSyntaxErrors": False}) as s:
        u = s.open(project / "train.py", BUGGY)
        (good,) = await s.diagnostics(u, lambda d: len(d) == 1)
        s.change(u, BUGGY.replace("loss.backward()", "loss.backward("))
        last = s.versions[u]
        await s.diagnostics(u, lambda d: any(p.uri == u and p.version == last for p in s.published))
        assert [(d.code, d.range) for d in s.client.diagnostics[u]] == [("TL101", good.range)]


async def test_initialization_options_and_disable(project):
    async with session(project, init_options={"settings": {"enable": False}}) as s:
        u = s.open(project / "train.py", BUGGY)
        assert await s.diagnostics(u) == []


async def test_broken_config_gives_one_clear_diagnostic(project):
    (project / "pyproject.toml").write_text('[tool.torchlint]\nselect = ["TL1O1"]\n')
    async with session(project) as s:
        u = s.open(project / "train.py", BUGGY)
        (d,) = await s.diagnostics(u, lambda d: len(d) == 1)
        assert d.code == "config" and "unknown rule code 'TL1O1'" in d.message and "pyproject.toml" in d.message
        v = s.open(project / "other.py", BUGGY)
        await s.diagnostics(v, lambda d: len(d) == 1)
        shown = [m for m in s.client.messages if "TL1O1" in m.message]
        assert len(shown) == 1 and shown[0].type == types.MessageType.Error
        (project / "pyproject.toml").write_text('[tool.torchlint]\nselect = ["TL101"]\n')
        s.client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(
                [types.FileEvent(uri(project / "pyproject.toml"), types.FileChangeType.Changed)]
            )
        )
        assert [d.code for d in await s.diagnostics(u, lambda d: [x.code for x in d] == ["TL101"])] == ["TL101"]


async def test_pull_diagnostics_when_the_client_pulls(project):
    caps = types.ClientCapabilities(
        workspace=PUSH.workspace,
        window=PUSH.window,
        text_document=types.TextDocumentClientCapabilities(diagnostic=types.DiagnosticClientCapabilities()),
    )
    async with session(project, capabilities=caps) as s:
        u = s.open(project / "train.py", BUGGY)
        report = await s.client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(types.TextDocumentIdentifier(u))
        )
        assert [d.code for d in report.items] == ["TL101"]
        s.change(u, FIXED)
        report = await s.client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(types.TextDocumentIdentifier(u))
        )
        assert list(report.items) == []
        assert not [p for p in s.published if p.uri == u]  # pulled, never pushed


async def test_notebook_cells_are_one_program(project):
    cells = [
        (
            "code",
            "import torch\n%matplotlib inline\nmodel = torch.nn.Linear(4, 2)\n"
            "optimizer = torch.optim.Adam(model.parameters())",
        ),
        ("markdown", "# Training"),
        (
            "code",
            "for x, y in loader:\n    loss = torch.nn.functional.mse_loss(model(x), y)\n"
            "    loss.backward()\n    optimizer.step()",
        ),
    ]
    async with session(project) as s:
        nb_uri, cell_uris, params = notebook_params(project, cells)
        s.client.notebook_document_did_open(params)
        (d,) = await s.diagnostics(cell_uris[2], lambda d: len(d) == 1)
        assert d.code == "TL101" and d.range.start == types.Position(0, 0)
        assert len(s.client.diagnostics[cell_uris[0]]) == 0
        actions = await s.client.text_document_code_action_async(
            types.CodeActionParams(types.TextDocumentIdentifier(cell_uris[2]), d.range, types.CodeActionContext([d]))
        )
        fix = next(a for a in actions if a.is_preferred)
        changes = {dc.text_document.uri: dc.edits for dc in fix.edit.document_changes}
        assert list(changes) == [cell_uris[2]]
        new = apply(cells[2][1], list(changes[cell_uris[2]]))
        assert new.startswith("for x, y in loader:\n    optimizer.zero_grad()\n")
        s.client.notebook_document_did_change(
            types.DidChangeNotebookDocumentParams(
                types.VersionedNotebookDocumentIdentifier(2, nb_uri),
                types.NotebookDocumentChangeEvent(
                    cells=types.NotebookDocumentCellChanges(
                        text_content=[
                            types.NotebookDocumentCellContentChanges(
                                types.VersionedTextDocumentIdentifier(2, cell_uris[2]),
                                [types.TextDocumentContentChangeWholeDocument(new)],
                            )
                        ]
                    )
                ),
            )
        )
        assert await s.diagnostics(cell_uris[2], lambda d: len(d) == 0) == []


async def test_a_message_that_cites_another_line_names_its_cell(project):
    """TL803 says where the softmax output reaches the loss as the notebook shows it: cell 4, line 2."""
    cells = [
        ("markdown", "# Train"),
        ("code", "import torch.nn.functional as F\nprobs = F.softmax(logits, dim=1)"),
        ("code", "y = 2"),
        ("code", "x = 1\nloss = F.cross_entropy(probs, target)"),
    ]
    async with session(project) as s:
        _, cell_uris, params = notebook_params(project, cells)
        s.client.notebook_document_did_open(params)
        (d,) = await s.diagnostics(cell_uris[1], lambda d: len(d) == 1)
        assert d.code == "TL803" and "on cell 4, line 2" in d.message and "on line" not in d.message, d.message


async def test_an_unparsable_cell_is_reported_in_its_cell_and_the_rest_still_linted(project):
    cells = [
        ("code", "import torch\nmodel = torch.nn.Linear(4, 2)\noptimizer = torch.optim.Adam(model.parameters())"),
        ("code", "lr = # TODO: pick a learning rate"),
        (
            "code",
            "for x, y in loader:\n    loss = torch.nn.functional.mse_loss(model(x), y)\n"
            "    loss.backward()\n    optimizer.step()",
        ),
    ]
    async with session(project) as s:
        _, cell_uris, params = notebook_params(project, cells)
        s.client.notebook_document_did_open(params)
        (broken,) = await s.diagnostics(cell_uris[1], lambda d: len(d) == 1)
        assert broken.code == "TL000" and broken.range.start.line == 0
        (d,) = await s.diagnostics(cell_uris[2], lambda d: len(d) == 1)
        assert d.code == "TL101" and d.range.start == types.Position(0, 0)


@pytest.mark.filterwarnings("ignore::pytest.PytestWarning")
def test_cli_checks_notebooks_by_cell(tmp_path, run_cli):
    nb = {
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": ["# hi\n"]},
            {
                "cell_type": "code",
                "metadata": {},
                "execution_count": None,
                "outputs": [],
                "source": ["import torch\n", "!pip install x\n", "sd = torch.load('m.pt')\n"],
            },
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(nb))
    (tmp_path / "requirements.txt").write_text("torch>=2.1\n")  # targets a torch before weights_only=True
    (tmp_path / "pyproject.toml").write_text(extend_select("TL601"))
    out = run_cli("check", "--output-format", "json", path)
    (f,) = json.loads(out.stdout)
    assert (f["path"], f["line"], f["code"]) == (f"{path}:cell_2", 3, "TL601")
    assert f["fix"]["edits"][0]["line"] == 3
    assert f["fix"]["applicability"] == "unsafe"
    assert run_cli("check", "--fix", path).returncode == 1  # an unsafe fix: not applied without --unsafe-fixes
    assert json.loads(path.read_text()) == nb
    assert run_cli("check", "--fix", "--unsafe-fixes", path).returncode == 0
    fixed = json.loads(path.read_text())
    assert fixed["cells"][1]["source"] == [
        "import torch\n",
        "!pip install x\n",
        "sd = torch.load('m.pt', weights_only=True)\n",
    ]
    assert fixed["cells"][0] == nb["cells"][0]
    ast.parse("".join(s for s in fixed["cells"][1]["source"] if not s.startswith("!")))


TRAIN = """\
import torch
model = torch.nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(8, 4), torch.randn(8, 2)) for _ in range(5)]
for x, y in loader:
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
"""


async def test_probe_command_publishes_runtime_observations(project):
    pytest.importorskip("torch")
    script = project / "train.py"
    script.write_text(TRAIN)
    async with session(project) as s:
        u = s.open(script, TRAIN)
        await s.diagnostics(u, lambda d: len(d) == 1)
        result = await s.client.workspace_execute_command_async(types.ExecuteCommandParams("torchlint.runProbe", [u]))
        assert result == {"observations": 1, "confirmed": 1, "not-observed": 0, "not-reached": 0}
        diags = await s.diagnostics(u, lambda d: len(d) == 2)
        (probe,) = [d for d in diags if d.source == "torchlint-probe"]
        assert probe.code == "grads-not-cleared"
        # at its expression, `optimizer.step()`, not from column 1; linked to the docs of its kind
        assert (probe.range.start.line, probe.range.start.character, probe.range.end.character) == (7, 4, 20)
        assert probe.code_description.href.endswith("docs/probe.md#what-it-observes")
        # the lint result kept alongside, marked as the run judged it
        (static,) = [d for d in diags if d.source == "torchlint"]
        assert static.code == "TL101" and static.message.endswith("[confirmed by the runtime probe]")
        static_line = static.range.start.line
        (reports,) = progress(s.client, "torchlint: probing train.py")
        assert reports[0].kind == "begin" and reports[-1].kind == "end"
        # two lines typed above: the observation moves with its line, the next lint keeps the mark
        s.change(u, "# data\n# model\n" + TRAIN)
        diags = await s.diagnostics(
            u, lambda d: [x.range.start.line for x in d if x.code == "TL101"] == [static_line + 2]
        )
        (probe,) = [d for d in diags if d.source == "torchlint-probe"]
        assert (probe.range.start.line, probe.range.start.character) == (9, 4)
        (static,) = [d for d in diags if d.source == "torchlint"]
        assert static.range.start.line == static_line + 2
        assert static.message.endswith("[confirmed by the runtime probe]"), static.message


def _running(marker: str) -> bool:
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if marker in cmdline.read_bytes().decode("utf-8", "replace"):
                return True
        except OSError:
            continue
    return False


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs /proc to find leftover processes")
async def test_probe_cancel_stops_the_script(project):
    pytest.importorskip("torch")
    script = project / "forever_7f3a.py"
    script.write_text("import torch\nwhile True:\n    torch.randn(4).sum()\n")
    async with session(project) as s:
        command = asyncio.ensure_future(
            s.client.workspace_execute_command_async(types.ExecuteCommandParams("torchlint.runProbe", [uri(script)]))
        )
        while not s.client.progress_reports or not _running(str(script)):
            await asyncio.sleep(0.1)
        (token,) = s.client.progress_reports
        s.client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token))
        with pytest.raises(Exception, match="cancel"):
            await asyncio.wait_for(command, 60)
        while _running(str(script)):  # the script's whole process tree goes away
            await asyncio.sleep(0.1)


async def test_probe_turned_on_just_before_the_command_is_honoured(project):
    """The command asks the client for its settings before refusing: a user who enables the probe and runs
    it at once beats the configuration notification (the e2e suite hit that race)."""
    pytest.importorskip("torch")
    script = project / "noop.py"
    script.write_text("import torch\nx = torch.ones(2)\n")
    async with session(project, settings={"probe": {"enabled": False}}) as s:
        u = s.open(project / "train.py", TRAIN)
        await s.diagnostics(u, lambda d: len(d) == 1)  # initialised, with the settings fetched
        run = types.ExecuteCommandParams("torchlint.runProbe", [uri(script)])
        with pytest.raises(Exception, match="disabled"):
            await s.client.workspace_execute_command_async(run)
        s.client.set_configuration({"probe": {"enabled": True}}, section="torchlint")  # no notification yet
        assert (await s.client.workspace_execute_command_async(run))["observations"] == 0


async def test_probe_command_on_a_notebook_shows_what_it_saw_in_its_cells(project):
    """Given a cell (what the editor has active) or the notebook, the command probes the saved notebook and
    puts each observation and finding status on its cell and line; an edit in a cell moves them along."""
    pytest.importorskip("torch")
    cells = [
        ("markdown", "# Train"),
        (
            "code",
            "import torch\nmodel = torch.nn.Linear(4, 2)\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)",
        ),
        ("code", "%matplotlib inline\nloader = [(torch.randn(8, 4), torch.randn(8, 2)) for _ in range(5)]"),
        ("code", TRAIN.split("\n", 4)[4]),  # the loop of TRAIN, at the top of its cell
    ]
    nb = {
        "cells": [
            {
                "cell_type": kind,
                "metadata": {},
                "source": text,
                **({"outputs": [], "execution_count": None} if kind == "code" else {}),
            }
            for kind, text in cells
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (project / "nb.ipynb").write_text(json.dumps(nb))
    async with session(project) as s:
        nb_uri, cell_uris, params = notebook_params(project, cells)
        s.client.notebook_document_did_open(params)
        (lint,) = await s.diagnostics(cell_uris[3], lambda d: len(d) == 1)
        assert lint.code == "TL101"
        run = types.ExecuteCommandParams("torchlint.runProbe", [cell_uris[2]])
        result = await s.client.workspace_execute_command_async(run)
        assert result == {"observations": 1, "confirmed": 1, "not-observed": 0, "not-reached": 0}
        diags = await s.diagnostics(cell_uris[3], lambda d: len(d) == 2)
        (probe,) = [d for d in diags if d.source == "torchlint-probe"]
        assert probe.code == "grads-not-cleared"
        # `optimizer.step()`: line 4 of its cell, from column 5
        assert (probe.range.start.line, probe.range.start.character, probe.range.end.character) == (3, 4, 20)
        (static,) = [d for d in diags if d.source == "torchlint"]
        assert static.message.endswith("[confirmed by the runtime probe]")
        for other in cell_uris[1:3]:
            assert not [d for d in s.client.diagnostics.get(other, []) if d.source == "torchlint-probe"]
        # the notebook's own URI does the same
        result = await s.client.workspace_execute_command_async(
            types.ExecuteCommandParams("torchlint.runProbe", [nb_uri])
        )
        assert result["observations"] == 1
        # a line typed at the top of the cell: the observation follows its line
        s.client.notebook_document_did_change(
            types.DidChangeNotebookDocumentParams(
                types.VersionedNotebookDocumentIdentifier(2, nb_uri),
                types.NotebookDocumentChangeEvent(
                    cells=types.NotebookDocumentCellChanges(
                        text_content=[
                            types.NotebookDocumentCellContentChanges(
                                types.VersionedTextDocumentIdentifier(2, cell_uris[3]),
                                [types.TextDocumentContentChangeWholeDocument("# epoch\n" + cells[3][1])],
                            )
                        ]
                    )
                ),
            )
        )
        diags = await s.diagnostics(
            cell_uris[3], lambda d: any(x.source == "torchlint" and x.range.start.line == 1 for x in d)
        )
        (probe,) = [d for d in diags if d.source == "torchlint-probe"]
        assert probe.range.start.line == 4
