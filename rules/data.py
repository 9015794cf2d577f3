"""Data-loading rules (TL4xx/TL5xx): DataLoader argument combinations that raise at run time."""

from __future__ import annotations

import libcst as cst

from torchlint.engine.callargs import get_arg, has_star, int_value, is_name, without_arg
from torchlint.engine.rule import Invalid, Replace, Rule, fix
from torchlint.findings import Severity

DATALOADER = "torch.utils.data.DataLoader"


_ERRORS = {
    "sampler": "sampler option is mutually exclusive with shuffle",
    "batch_sampler": "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last",
}


class DataLoaderShuffleWithSampler(Rule):
    code = "TL404"
    requires = ("DataLoader",)
    name = "dataloader-shuffle-with-sampler"
    message = (
        "`shuffle=True` together with `{other}=` raises `ValueError: {error}`; the sampler decides the "
        "order — drop `shuffle`"
    )
    severity = Severity.ERROR
    summary = "DataLoader(shuffle=True, sampler=...)"
    what = "Flags `DataLoader(..., shuffle=True, sampler=...)` (or `batch_sampler=`)."
    why = (
        "A DataLoader draws indices from exactly one source. With a custom sampler, shuffling is the "
        "sampler's job (`DistributedSampler(shuffle=True)`, `RandomSampler`), and the constructor rejects "
        "the combination with a ValueError when the script starts."
    )
    example = """\
from torch.utils.data import DataLoader, DistributedSampler

loader = DataLoader(dataset, batch_size=32, shuffle=True, sampler=DistributedSampler(dataset))
"""
    fix_example = """\
from torch.utils.data import DataLoader, DistributedSampler

loader = DataLoader(dataset, batch_size=32, sampler=DistributedSampler(dataset))
"""
    fix_safety = "Safe: the call raised before; without `shuffle` the sampler's order is used, as intended."
    VALID = [
        "from torch.utils.data import DataLoader\nloader = DataLoader(ds, shuffle=True)\n",
        "from torch.utils.data import DataLoader\nloader = DataLoader(ds, sampler=s, shuffle=False)\n",
        "from torch.utils.data import DataLoader\nloader = DataLoader(ds, sampler=None, shuffle=True)\n",
        "from torch.utils.data import DataLoader\nloader = DataLoader(ds, shuffle=sampler is None, sampler=sampler)\n",
    ]
    INVALID = [
        Invalid(
            "import torch\nloader = torch.utils.data.DataLoader(ds, sampler=s, shuffle=True)\n",
            line=2,
            fixed="import torch\nloader = torch.utils.data.DataLoader(ds, sampler=s)\n",
        ),
        Invalid(
            "from torch.utils.data import DataLoader\nloader = DataLoader(ds, shuffle=True, batch_sampler=bs)\n",
            line=2,
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.qualname(node.func) != DATALOADER:
            return
        shuffle = get_arg(node, "shuffle", 2)
        if shuffle is None or not is_name(shuffle.value, "True"):
            return
        for name, pos in (("sampler", 3), ("batch_sampler", 4)):
            other = get_arg(node, name, pos)
            if other is not None and not is_name(other.value, "None"):
                edit = None
                if shuffle.keyword is not None:
                    edit = fix("Drop `shuffle=True`", Replace(node, without_arg(node, shuffle)))
                self.report(shuffle, self.message.format(other=name, error=_ERRORS[name]), fix=edit)
                return


class PersistentWorkersWithoutWorkers(Rule):
    code = "TL501"
    requires = ("DataLoader",)
    name = "persistent-workers-without-workers"
    message = (
        "`persistent_workers=True` with {why}: DataLoader raises `ValueError: persistent_workers option "
        "needs num_workers > 0`"
    )
    severity = Severity.ERROR
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
