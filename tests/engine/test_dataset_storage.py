"""dataset_storage.py: Dataset classes that keep their samples as Python objects, or on a device."""

from __future__ import annotations

from pathlib import Path

from torchlint.engine.semantic.inference import ClassKinds
from torchlint.engine.semantic.project import summarize
from torchlint.engine.torch.dataset_storage import collate_on_device, device_samples, python_object_store

HEAD = "import json\nimport numpy as np\nimport torch\nfrom torch.utils.data import Dataset\n"


def _store(body: str, name: str = "D"):
    summary = summarize(Path("m.py"), "m", "", HEAD + body)
    assert summary is not None
    return python_object_store(ClassKinds(None, summary, {}), name)


def test_a_list_grown_in_a_loop_and_indexed():
    store = _store(
        "class D(Dataset):\n    def __init__(self, path):\n        self.rows = []\n"
        "        for line in open(path):\n            self.rows.append(line.split())\n"
        "    def __getitem__(self, i):\n        return self.rows[i]\n"
    )
    assert store is not None and (store.attribute, store.line) == ("rows", 7)


def test_json_and_comprehensions_build_whole_lists():
    assert _store(
        "class D(Dataset):\n    def __init__(self, f):\n        self.items = json.load(f)\n"
        "    def __getitem__(self, i):\n        return self.items[i]\n"
    )
    assert _store(
        "class D(Dataset):\n    def __init__(self, f):\n        self.items = {k: v.split() for k, v in f}\n"
        "    def __getitem__(self, i):\n        return self.items[i]\n"
    )


def test_arrays_tensors_conversions_and_non_datasets_are_not_proof():
    assert not _store(  # tensors appended
        "class D(Dataset):\n    def __init__(self, fs):\n        self.t = []\n        for f in fs:\n"
        "            self.t.append(torch.load(f))\n    def __getitem__(self, i):\n        return self.t[i]\n"
    )
    assert not _store(  # converted afterwards
        "class D(Dataset):\n    def __init__(self, fs):\n        self.t = []\n        for f in fs:\n"
        "            self.t.append(f.split())\n        self.t = np.array(self.t)\n"
        "    def __getitem__(self, i):\n        return self.t[i]\n"
    )
    assert not _store(  # a literal range: a small, fixed list
        "class D(Dataset):\n    def __init__(self):\n        self.t = []\n        for k in range(10):\n"
        "            self.t.append(str(k))\n    def __getitem__(self, i):\n        return self.t[i]\n"
    )
    assert not _store(  # not a Dataset subclass
        "class D:\n    def __init__(self, path):\n        self.rows = [l for l in open(path)]\n"
        "    def __getitem__(self, i):\n        return self.rows[i]\n"
    )
    assert not _store(  # file names whose files __getitem__ opens
        "class D(Dataset):\n    def __init__(self, fs):\n        self.paths = [f for f in fs]\n"
        "    def __getitem__(self, i):\n        path, = self.paths[i],\n        return open(path).read()\n"
    )


def _device_line(body: str, name: str = "D", arguments: frozenset = frozenset()) -> int | None:
    summary = summarize(Path("m.py"), "m", "", HEAD + body)
    assert summary is not None
    found = device_samples(ClassKinds(None, summary, {}), name)
    assert found is None or found.arguments == arguments
    return found.line if found is not None else None


def test_samples_moved_in_init_and_returned_are_on_the_device():
    init = "class D(Dataset):\n    def __init__(self, x, y):\n        self.x = torch.tensor(x).float().to(device)\n"
    init += "        self.y = torch.tensor(y).cuda()\n"
    assert (
        _device_line(init + "    def __getitem__(self, i):\n        return self.x[i], self.y[i]\n") == 8
    )  # HEAD is 4 lines
    assert _device_line(init + "    def __getitem__(self, i):\n        return self.x[i]\n") == 7


def test_unknown_or_host_samples_stay_unknown():
    init = "class D(Dataset):\n    def __init__(self, x, y):\n        self.x = torch.tensor(x).to(device)\n"
    host = "        self.y = torch.tensor(y).to(torch.float32)\n"
    getitem = "    def __getitem__(self, i):\n        return self.x[i], self.y[i]\n"
    assert _device_line(init + host + getitem) is None  # a dtype change is no move
    assert _device_line(init + "        self.y = y.to('cpu')\n" + getitem) is None
    assert _device_line(init + "        self.y = y.numpy()\n" + getitem) is None
    assert _device_line(init + "        self.y = torch.tensor(y, device='cpu')\n" + getitem) is None
    rebound = "    def reset(self):\n        self.x = torch.zeros(3)\n"
    assert _device_line(init + "    def __getitem__(self, i):\n        return self.x[i]\n" + rebound) is None
    assert _device_line(init + "    def __getitem__(self, i):\n        return self.x[i] * 2\n") is None
    assert (
        _device_line(init.replace("(Dataset)", "") + "    def __getitem__(self, i):\n        return self.x[i]\n")
        is None
    )


def _collate_line(body: str) -> int | None:
    summary = summarize(Path("m.py"), "m", "", HEAD + body)
    assert summary is not None
    return collate_on_device(summary.functions["collate"])


def test_a_collate_fn_that_returns_moved_tensors_hands_out_device_batches():
    body = "def collate(batch):\n    xs, ys = zip(*batch)\n"
    assert _collate_line(body + "    return torch.stack(xs).to(device), torch.tensor(ys).cuda()\n") == 7
    assert _collate_line(body + "    if not xs:\n        return None\n    return torch.stack(xs).to(device)\n") is None
    assert _collate_line(body + "    return torch.stack(xs).to(device), torch.tensor(ys)\n") is None
    assert _collate_line(body + "    return torch.stack(xs).to(torch.float16)\n") is None
    assert _collate_line(body + "    return torch.stack(xs).to('cpu')\n") is None
    assert _collate_line(body + "    out = torch.stack(xs).to(device)\n") is None  # returns nothing


def test_samples_copied_from_init_arguments_are_where_the_caller_put_them():
    init = "class D(Dataset):\n    def __init__(self, x, y):\n        self.x = torch.tensor(x).float()\n"
    getitem = "    def __getitem__(self, i):\n        return self.x[i], self.y[i]\n"
    both = frozenset({(0, "x"), (1, "y")})
    assert _device_line(init + "        self.y = y\n" + getitem, arguments=both) == 8
    moved = frozenset({(0, "x")})
    assert _device_line(init + "        self.y = y.to(device)\n" + getitem, arguments=moved) == 8
