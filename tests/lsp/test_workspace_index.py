"""The server's project index: open editor text wins over the disk, and editing a module re-lints the
open files whose findings were derived from it."""

from __future__ import annotations

import shutil

import pytest
from lsp_session import session, uri
from lsprotocol import types

from fixture_expectations import FIXTURES
from selecting import extend_select

pytestmark = pytest.mark.asyncio

BASE = "from torch import nn\n\n\nclass Base(nn.Module):\n    pass\n"
NET = (
    "import torch\n\nfrom base import Base\n\n\nclass Net(Base):\n    def __init__(self):\n"
    "        super().__init__()\n        self.scale = torch.ones(4)\n"
)


async def test_editing_a_base_class_relints_the_open_subclass(project):
    (project / "pyproject.toml").write_text(extend_select("TL201"))  # opt-in (measured value)
    (project / "base.py").write_text(BASE)
    (project / "net.py").write_text(NET)
    async with session(project) as s:
        net = s.open(project / "net.py", NET)
        (d,) = await s.diagnostics(net, lambda d: len(d) == 1)
        assert d.code == "TL201"  # Net is a module through base.py, another file
        base = s.open(project / "base.py", BASE)
        s.change(base, "class Base:\n    pass\n")  # unsaved: the index reads the editor's text
        assert await s.diagnostics(net, lambda d: len(d) == 0) == []
        s.change(base, BASE)
        (again,) = await s.diagnostics(net, lambda d: len(d) == 1)
        assert again.code == "TL201"


async def test_a_new_entry_point_that_sets_up_the_process_group_relints_the_library(project):
    """The library's TL402 rests on a scan of every project file: a file created on disk that sets up the
    process group re-lints it, though the lint never read that file before."""
    shutil.copytree(FIXTURES / "projects" / "ddp_no_init" / "trainkit", project / "trainkit")
    trainer = project / "trainkit" / "trainer.py"
    async with session(project) as s:
        u = s.open(trainer, trainer.read_text(encoding="utf-8"))
        (d,) = await s.diagnostics(u, lambda d: len(d) == 1)
        assert d.code == "TL402"
        launch = project / "launch.py"
        launch.write_text((FIXTURES / "projects" / "ddp_entry" / "clean_main.py").read_text(encoding="utf-8"))
        s.client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams([types.FileEvent(uri(launch), types.FileChangeType.Created)])
        )
        assert await s.diagnostics(u, lambda d: len(d) == 0) == []
