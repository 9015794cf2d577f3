"""TL404 dataloader-shuffle-with-sampler: DataLoader(shuffle=True, sampler=...)"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.callargs import get_arg, is_name, without_arg
from torchlint.engine.rule import SAFE, Invalid, Replace, Rule, fix
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
    category = "correctness"
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
            fixed="""\
from torch.utils.data import DataLoader
loader = DataLoader(ds, batch_sampler=bs)
""",
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
                    edit = fix("Drop `shuffle=True`", Replace(node, without_arg(node, shuffle)), applicability=SAFE)
                self.report(shuffle, self.message.format(other=name, error=_ERRORS[name]), fix=edit)
                return
