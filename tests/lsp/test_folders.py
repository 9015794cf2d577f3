"""Multi-root workspaces: each workspace folder is linted with its own editor settings."""

from __future__ import annotations

import pytest
from lsp_session import BUGGY, session, uri
from lsprotocol import types

pytestmark = pytest.mark.asyncio
BOTH = BUGGY + 'sd = torch.load("m.pt")\n'  # TL101 and TL601


def codes(diags: list[types.Diagnostic]) -> list[str]:
    return sorted(str(d.code) for d in diags)


async def test_each_folder_has_its_own_settings_and_others_get_the_global_ones(tmp_path):
    first, second, outside = tmp_path / "first", tmp_path / "second", tmp_path / "outside"
    for d in (first, second, outside):
        d.mkdir()
    # TL601 is opt-in: the configured selection names its prefix, which a folder's select replaces or ignore removes
    (tmp_path / "pyproject.toml").write_text(
        "[project]\nname = 'demo'\ndependencies = ['torch>=2.1']\n\n[tool.torchlint]\nselect = ['TL1', 'TL6']\n"
    )
    folders = {first: {"select": ["TL6"]}, second: {"ignore": ["TL6"], "severity": {"TL101": "info"}}}
    async with session(tmp_path, settings={"ignore": ["TL101"]}, folders=folders) as s:
        a = s.open(first / "train.py", BOTH)
        b = s.open(second / "train.py", BOTH)
        c = s.open(outside / "train.py", BOTH)
        assert codes(await s.diagnostics(a, lambda d: codes(d) == ["TL601"])) == ["TL601"]
        (d,) = await s.diagnostics(b, lambda d: codes(d) == ["TL101"])
        assert d.severity == types.DiagnosticSeverity.Information
        assert codes(await s.diagnostics(c, lambda d: codes(d) == ["TL601"])) == ["TL601"]  # global: no TL101

        # a folder added later brings its own settings, and its open documents follow them
        third = tmp_path / "third"
        third.mkdir()
        t = s.open(third / "train.py", BOTH)
        assert codes(await s.diagnostics(t, lambda d: codes(d) == ["TL601"])) == ["TL601"]
        s.client.set_configuration({"select": ["TL1"]}, section="torchlint", scope_uri=uri(third))
        s.client.workspace_did_change_workspace_folders(
            types.DidChangeWorkspaceFoldersParams(
                types.WorkspaceFoldersChangeEvent(added=[types.WorkspaceFolder(uri(third), "third")], removed=[])
            )
        )
        assert codes(await s.diagnostics(t, lambda d: codes(d) == ["TL101"])) == ["TL101"]
