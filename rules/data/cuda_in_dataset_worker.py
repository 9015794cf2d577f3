"""TL504 cuda-in-dataset-worker: CUDA used in a Dataset's __getitem__ that DataLoader workers run"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.rule import Invalid, Rule
from torchlint.findings import Severity

from ._helpers import worker_dataset


class CudaInDatasetWorker(Rule):
    code = "TL504"
    analyses = frozenset({Analysis.BUILT_CLASSES, Analysis.OWN_SUMMARY, Analysis.VALUES})
    requires = ("DataLoader", "cuda")
    name = "cuda-in-dataset-worker"
    message = (
        "`num_workers={workers}` runs `{cls}.__getitem__`, which puts tensors on CUDA ({place}) in a worker "
        "process: with the default `fork` start method the worker dies with `RuntimeError: Cannot re-initialize "
        "CUDA in forked subprocess`; return CPU tensors and move the batch in the training loop"
    )
    severity = Severity.ERROR
    category = "correctness"
    summary = "CUDA tensors created or moved in a Dataset.__getitem__ that DataLoader workers run"
    what = (
        "Flags a `DataLoader` with a literal `num_workers > 0` over an instance of a `torch.utils.data.Dataset` "
        "subclass (of this file or another project file) whose `__getitem__` calls `.cuda()`, moves to a "
        '`"cuda"` device or creates a tensor with `device="cuda"`. A device held in a variable is not '
        "followed (it may be the CPU)."
    )
    why = (
        "Worker processes are forked from the training process, which has usually initialised CUDA already "
        "(the model is on the GPU). CUDA cannot be used again in a forked child, so the first batch fails. "
        "Even with the `spawn` start method each worker would hold its own CUDA context (hundreds of MB of GPU "
        "memory) and the batch would be copied between processes through shared CUDA memory. Samples belong "
        "on the CPU until the loop moves the whole batch (with `pin_memory=True` for fast copies)."
    )
    example = """\
import torch
from torch.utils.data import DataLoader, Dataset

class Pairs(Dataset):
    def __init__(self, x, y):
        self.x, self.y = x, y
    def __len__(self):
        return len(self.x)
    def __getitem__(self, i):
        return self.x[i].cuda(), self.y[i].cuda()

loader = DataLoader(Pairs(xs, ys), batch_size=32, num_workers=4)
"""
    fix_example = """\
import torch
from torch.utils.data import DataLoader, Dataset

class Pairs(Dataset):
    def __init__(self, x, y):
        self.x, self.y = x, y
    def __len__(self):
        return len(self.x)
    def __getitem__(self, i):
        return self.x[i], self.y[i]

loader = DataLoader(Pairs(xs, ys), batch_size=32, num_workers=4, pin_memory=True)
for x, y in loader:
    x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
"""
    VALID = [
        """\
from torch.utils.data import DataLoader, Dataset
class Pairs(Dataset):
    def __getitem__(self, i):
        return self.x[i].cuda()
loader = DataLoader(Pairs(), num_workers=0)
""",
        """\
from torch.utils.data import DataLoader, Dataset
class Pairs(Dataset):
    def __getitem__(self, i):
        return self.x[i].to(self.device)
loader = DataLoader(Pairs(), num_workers=2)
""",
        """\
from torch.utils.data import DataLoader, Dataset
class Pairs(Dataset):
    def __getitem__(self, i):
        return self.x[i]
    def to_gpu(self):
        self.x = self.x.cuda()
loader = DataLoader(Pairs(), num_workers=2)
""",
    ]
    INVALID = [
        Invalid(
            """\
import torch
from torch.utils.data import DataLoader, Dataset
class Noise(Dataset):
    def __len__(self):
        return 100
    def __getitem__(self, i):
        return torch.randn(3, 32, 32, device="cuda")
data = Noise()
loader = DataLoader(data, batch_size=8, num_workers=2)
""",
            line=9,
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        found = worker_dataset(self.ctx, node)
        if found is None:
            return
        line = found.dataset.cuda_in_getitem()
        if line is not None:
            place, cites = found.place(line)
            message = self.message.format(workers=found.workers, cls=found.dataset.name, place=place)
            self.report(node, message, cites=cites)
