"""TL505 workers-over-python-objects: DataLoader workers over a Dataset that keeps its samples as Python objects"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.rule import Invalid, Rule
from torchlint.findings import Severity

from ._helpers import worker_dataset


class WorkersOverPythonObjects(Rule):
    code = "TL505"
    analyses = frozenset({Analysis.BUILT_CLASSES, Analysis.OWN_SUMMARY, Analysis.VALUES})
    requires = ("DataLoader",)
    name = "workers-over-python-objects"
    message = (
        "`num_workers={workers}` over `{cls}`, whose samples are Python objects in `self.{attr}` (built in "
        "`__init__`, {place}): every read in a worker writes the objects' reference counts, so copy-on-write "
        "copies the whole dataset into each worker and memory grows per worker — store the samples as "
        "numpy arrays or tensors"
    )
    severity = Severity.INFO
    category = "resource"
    opt_in = (
        "Measured on 25 public repositories it was not tuned on (bench/realworld, unseen at 2026-12-03 and "
        "2026-12-04), 0 of its 4 findings were right (4 debatable): a 1000-image toy dataset whose label dict "
        "copy-on-read in 4 workers costs little. Select it for datasets of millions of Python objects."
    )
    summary = "DataLoader workers over a Dataset whose samples are a large Python list/dict"
    what = (
        "Flags a `DataLoader` with a literal `num_workers > 0` over an instance of a `torch.utils.data.Dataset` "
        "subclass (of this file or another project file) whose `__init__` builds a list or dict of Python "
        "objects — grown in a loop over files or lines, a comprehension, `readlines()` or `json.load` — that "
        "`__getitem__` indexes and nothing converts afterwards. Not flagged: samples appended as tensors or "
        "arrays, lists converted to arrays, lists of file names whose files `__getitem__` opens, datasets "
        "the loader's argument cannot be traced to."
    )
    why = (
        "Workers are forked with the dataset in memory and share its pages until they are written. Reading a "
        "Python object writes its reference count, so every worker gradually touches — and copies — every "
        "page of the list's objects: memory use grows to a copy of the dataset per worker (the well-known "
        "'DataLoader memory leak'). A numpy array or tensor is one object over one buffer, so its data stays "
        "shared."
    )
    example = """\
import json
from torch.utils.data import DataLoader, Dataset

class Lines(Dataset):
    def __init__(self, path):
        self.samples = []
        for line in open(path):
            self.samples.append(json.loads(line))
    def __len__(self):
        return len(self.samples)
    def __getitem__(self, i):
        return self.samples[i]["text"], self.samples[i]["label"]

loader = DataLoader(Lines("train.jsonl"), batch_size=32, num_workers=8)
"""
    VALID = [
        # numpy-backed
        """\
import numpy as np
from torch.utils.data import DataLoader, Dataset
class Arr(Dataset):
    def __init__(self, path):
        rows = []
        for line in open(path):
            rows.append([float(v) for v in line.split(",")])
        self.data = np.array(rows, dtype=np.float32)
    def __getitem__(self, i):
        return self.data[i]
loader = DataLoader(Arr("x.csv"), num_workers=4)
""",
        # file-backed: a list of paths, each file read in __getitem__
        """\
import os
from PIL import Image
from torch.utils.data import DataLoader, Dataset
class Images(Dataset):
    def __init__(self, root):
        self.files = []
        for name in os.listdir(root):
            self.files.append(os.path.join(root, name))
    def __getitem__(self, i):
        return Image.open(self.files[i])
loader = DataLoader(Images("data"), num_workers=4)
""",
        # tensors appended, memmap, converted list; and no workers
        """\
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset
class T(Dataset):
    def __init__(self, files):
        self.items = []
        for f in files:
            self.items.append(torch.load(f))
    def __getitem__(self, i):
        return self.items[i]
class M(Dataset):
    def __init__(self, path):
        self.data = np.load(path, mmap_mode="r")
    def __getitem__(self, i):
        return self.data[i]
class C(Dataset):
    def __init__(self, path):
        self.rows = []
        for line in open(path):
            self.rows.append(line.split())
        self.rows = torch.tensor(self.rows)
    def __getitem__(self, i):
        return self.rows[i]
a = DataLoader(T(files), num_workers=4)
b = DataLoader(M("x.npy"), num_workers=4)
c = DataLoader(C("x.txt"), num_workers=4)
""",
        """\
from torch.utils.data import DataLoader, Dataset
class Lines(Dataset):
    def __init__(self, path):
        self.samples = [line.split() for line in open(path)]
    def __getitem__(self, i):
        return self.samples[i]
loader = DataLoader(Lines("x.txt"), num_workers=0)
other = DataLoader(dataset, num_workers=4)
""",
    ]
    INVALID = [
        Invalid(
            """\
from torch.utils.data import DataLoader, Dataset
class Lines(Dataset):
    def __init__(self, path):
        self.samples = [line.split() for line in open(path)]
    def __getitem__(self, i):
        return self.samples[i]
ds = Lines("x.txt")
loader = DataLoader(ds, batch_size=8, num_workers=4)
""",
            line=8,
        ),
        Invalid(
            """\
import torch
class Pairs(torch.utils.data.Dataset):
    def __init__(self, files):
        self.index = {}
        for path in files:
            for k, line in enumerate(open(path)):
                self.index[len(self.index)] = (path, k, line.strip())
    def __getitem__(self, i):
        return self.index[i][2]
def main(files):
    loader = torch.utils.data.DataLoader(Pairs(files), num_workers=2)
""",
            line=11,
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        found = worker_dataset(self.ctx, node)
        if found is None:
            return
        store = found.dataset.python_object_store()
        if store is None:
            return
        place, cites = found.place(store.line)
        message = self.message.format(workers=found.workers, cls=found.dataset.name, attr=store.attribute, place=place)
        self.report(node, message, cites=cites)
