"""The server's project index: open editor text wins over the disk, and editing a module re-lints the
open files whose findings were derived from it."""

from __future__ import annotations

import pytest
from lsp_session import session

pytestmark = pytest.mark.asyncio

BASE = "from torch import nn\n\n\nclass Base(nn.Module):\n    pass\n"
NET = (
    "import torch\n\nfrom base import Base\n\n\nclass Net(Base):\n    def __init__(self):\n"
    "        super().__init__()\n        self.scale = torch.ones(4)\n"
)


async def test_editing_a_base_class_relints_the_open_subclass(project):
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
