"""TL501 persistent-workers-without-workers: DataLoader(persistent_workers=True) with num_workers=0"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.callargs import get_arg, has_star, int_value, is_name
from torchlint.engine.rule import Invalid, Rule
from torchlint.findings import Severity

DATALOADER = "torch.utils.data.DataLoader"


class PersistentWorkersWithoutWorkers(Rule):
    code = "TL501"
    requires = ("DataLoader",)
    name = "persistent-workers-without-workers"
    message = (
        "`persistent_workers=True` with {why}: DataLoader raises `ValueError: persistent_workers option "
        "needs num_workers > 0`"
    )
    severity = Severity.ERROR
    category = "correctness"
    summary = "DataLoader(persistent_workers=True) with num_workers=0"
    what = "Flags `DataLoader(persistent_workers=True)` whose `num_workers` is absent or the literal 0."
    why = (
        "Persistent workers keep worker processes alive between epochs; with no worker processes there is "
        "nothing to keep, and the DataLoader constructor raises a ValueError."
    )
    example = """\
from torch.utils.data import DataLoader

loader = DataLoader(dataset, batch_size=64, persistent_workers=True)
"""
    VALID = [
        "from torch.utils.data import DataLoader\nloader = DataLoader(ds, num_workers=4, persistent_workers=True)\n",
        "from torch.utils.data import DataLoader\nloader = DataLoader(ds, num_workers=n, persistent_workers=n > 0)\n",
        "from torch.utils.data import DataLoader\nloader = DataLoader(ds, **cfg, persistent_workers=True)\n",
    ]
    INVALID = [
        Invalid(
            "import torch\nloader = torch.utils.data.DataLoader(ds, num_workers=0, persistent_workers=True)\n",
            line=2,
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.qualname(node.func) != DATALOADER or has_star(node):
            return
        persistent = get_arg(node, "persistent_workers", 12)
        if persistent is None or not is_name(persistent.value, "True"):
            return
        workers = get_arg(node, "num_workers", 5)
        if workers is None:
            self.report(persistent, self.message.format(why="no `num_workers` (default 0)"))
        elif int_value(workers.value) == 0:
            self.report(persistent, self.message.format(why="`num_workers=0`"))
