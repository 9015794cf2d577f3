"""Whether a Dataset class keeps its samples as many Python objects built in `__init__`.

A DataLoader's worker processes are forked with the dataset in memory. Every read of a
Python object writes its reference count, so each worker gradually copies every page
holding the dataset's objects (copy-on-write), and memory grows with the number of
workers. NumPy arrays, tensors and memory maps are a few objects over one buffer and
are not affected. The evidence here is the class's code, read as an `ast` (of this file
or of another project file): a `torch.utils.data.Dataset` subclass (through project classes too, as the
inference reads the hierarchy) whose `__init__`
grows a list or dict attribute in a loop (`self.samples.append(...)` in a `for` over
something other than a literal `range`), builds one by a comprehension, `readlines()` or
`json.load`, never converts it afterwards, and whose `__getitem__` indexes it. Appending
tensors or arrays does not count. Anything else is unknown.

The same reading says where a DataLoader's batches are: already on a device when its Dataset
moves the samples it hands out (`device_samples`) or its `collate_fn` moves each batch
(`collate_on_device`). Only moves written there count; anything else is unknown.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from torchlint.engine.semantic.inference import ClassKinds
from torchlint.engine.semantic.kinds import SAME_DEVICE_METHODS
from torchlint.engine.semantic.project import ModuleSummary, qualify
from torchlint.engine.torch.device_moves import moves_device

DATASET_BASES = frozenset({"torch.utils.data.Dataset", "torch.utils.data.dataset.Dataset"})
_GROW = frozenset({"append", "extend", "insert", "setdefault", "update"})
_ARRAY_LIBRARIES = ("torch.", "numpy.", "np.", "pandas.", "h5py.", "PIL.")
_FILE_READERS = frozenset({"open", "load", "imread", "read_image", "decode_image", "loadmat", "read", "read_file"})
_FILE_LIBRARIES = ("PIL.", "cv2.", "imageio.", "torchvision.io.", "torchaudio.", "soundfile.", "librosa.", "h5py.")


@dataclass(frozen=True)
class ObjectStore:
    attribute: str  # `samples` of `self.samples`
    line: int  # where `__init__` builds it


def python_object_store(classes: ClassKinds, name: str) -> ObjectStore | None:
    """The attribute of Dataset class `name` (of the file `classes` reads) that holds its samples as Python
    objects, if proven."""
    summary = classes.summary
    cls = _dataset_class(classes, name)
    if cls is None:
        return None
    methods = {s.name: s for s in cls.body if isinstance(s, ast.FunctionDef)}
    init, getitem = methods.get("__init__"), methods.get("__getitem__")
    if init is None or getitem is None:
        return None
    indexed = {a for n in ast.walk(getitem) if isinstance(n, ast.Subscript) for a in [_self_attribute(n.value)] if a}
    for attr in sorted(indexed):
        if _opens_files(summary, getitem, attr):
            continue  # an index of files: the samples live on disk
        assigned = [
            n
            for n in ast.walk(cls)
            if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign))
            and any(_self_attribute(t) == attr for t in _targets(n))
        ]
        if len(assigned) != 1 or not any(n is assigned[0] for n in ast.walk(init)):
            continue  # converted (or set) elsewhere: not proven
        value = assigned[0].value
        if value is None:
            continue
        if _built_whole(summary, value) or (_empty(value) and _grown_in_loop(summary, init, attr)):
            return ObjectStore(attr, assigned[0].lineno)
    return None


def cuda_in_getitem(classes: ClassKinds, name: str) -> int | None:
    """The line where Dataset class `name`'s `__getitem__` puts a tensor on CUDA (`.cuda()`, a `"cuda"`
    device or `torch.device("cuda")` written there), if it does: code a DataLoader worker runs."""
    summary = classes.summary
    cls = _dataset_class(classes, name)
    if cls is None:
        return None
    getitem = next((s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "__getitem__"), None)
    if getitem is None:
        return None
    for node in ast.walk(getitem):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "cuda":
            return node.lineno
        values = [*node.args, *(k.value for k in node.keywords if k.arg in (None, "device"))]
        moves = isinstance(func, ast.Attribute) and func.attr == "to"
        device = "device" in {k.arg for k in node.keywords} or qualify(summary, func) == "torch.device"
        if (moves or device) and any(_cuda_literal(v) for v in values):
            return node.lineno
    return None


@dataclass(frozen=True)
class DeviceSamples:
    """Where a Dataset puts the samples it hands out on a device, and which `__init__` arguments must already
    be there for that: `self.x = torch.tensor(x).float()` keeps `x` where the caller put it."""

    line: int
    arguments: frozenset[tuple[int, str]]  # (position after `self`, name) of each such parameter


def device_samples(classes: ClassKinds, name: str) -> DeviceSamples | None:
    """Whether Dataset class `name` hands out samples on a device, so every batch a DataLoader draws from it
    is already there: a move in `__getitem__` (`cuda_in_getitem`), or a `__getitem__` whose every return
    reads `self.` attributes (`self.x[i]`, `(self.x[i], self.y[i])`) that `__init__` alone binds, each to a
    moved tensor (`self.x = torch.tensor(x).to(device)`) or a copy of a parameter (`torch.tensor(x)` of a
    tensor stays on its device; the caller's argument decides). Else None."""
    line = cuda_in_getitem(classes, name)
    cls = _dataset_class(classes, name)
    if line is not None or cls is None:
        return DeviceSamples(line, frozenset()) if line is not None else None
    methods = {s.name: s for s in cls.body if isinstance(s, ast.FunctionDef)}
    init, getitem = methods.get("__init__"), methods.get("__getitem__")
    if init is None or getitem is None:
        return None
    returned = [n.value for n in ast.walk(getitem) if isinstance(n, ast.Return)]
    reads = [r for value in returned for r in (value.elts if isinstance(value, ast.Tuple) else [value])]
    found = [f for r in reads for f in [_bound_in_init(classes.summary, cls, init, _read_attribute(r))] if f]
    if not reads or len(found) != len(reads):
        return None
    return DeviceSamples(max(f[0] for f in found), frozenset(f[1] for f in found if f[1] is not None))


def _read_attribute(expr: ast.expr | None) -> str | None:
    """`x` of `self.x[i]` or `self.x`."""
    return _self_attribute(expr.value if isinstance(expr, ast.Subscript) else expr) if expr is not None else None


def _bound_in_init(
    summary: ModuleSummary, cls: ast.ClassDef, init: ast.FunctionDef, attr: str | None
) -> tuple[int, tuple[int, str] | None] | None:
    """(line, None) where `__init__` binds `self.attr` to a moved tensor, or (line, parameter) where it binds
    it to a copy of that parameter; only if that is its one binding in the class."""
    assigned = [
        n
        for n in ast.walk(cls)
        if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign))
        and any(_self_attribute(t) == attr for t in _targets(n))
    ]
    if attr is None or len(assigned) != 1 or not any(n is assigned[0] for n in ast.walk(init)):
        return None
    value, line = assigned[0].value, assigned[0].lineno
    if value is not None and any(_device_move(n) for n in ast.walk(value)):
        return line, None
    parameter = _copied_parameter(summary, init, value) if value is not None else None
    return (line, parameter) if parameter is not None else None


def _copied_parameter(summary: ModuleSummary, init: ast.FunctionDef, value: ast.expr) -> tuple[int, str] | None:
    """(position after `self`, name) of the `__init__` parameter `value` holds on its own device: the
    parameter itself, `torch.tensor(p)` / `torch.as_tensor(p)` without `device=`, and `.float()`-like casts."""
    while (
        isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in SAME_DEVICE_METHODS
    ):
        value = value.func.value
    if (
        isinstance(value, ast.Call)
        and qualify(summary, value.func) in ("torch.tensor", "torch.as_tensor")
        and len(value.args) == 1
        and "device" not in {k.arg for k in value.keywords}
    ):
        value = value.args[0]
    params = [a.arg for a in init.args.args][1:]
    if isinstance(value, ast.Name) and value.id in params:
        return params.index(value.id), value.id
    return None


def collate_on_device(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int | None:
    """The line of the last `return` of collate function `fn` if every `return` hands out its batch moved
    to a device (`x.to(device)`, or a tuple of such moves): a DataLoader built with `collate_fn=fn` yields
    batches already there. Else None."""
    returned = [n for n in ast.walk(fn) if isinstance(n, ast.Return)]
    values = [v for r in returned for v in (r.value.elts if isinstance(r.value, ast.Tuple) else [r.value])]
    if not values or not all(v is not None and _device_move(v) for v in values):
        return None
    return max(r.lineno for r in returned)


def _device_move(expr: ast.AST) -> bool:
    """`x.to(device)` / `x.cuda()`; `.to("cpu")` keeps the value on the host."""
    if not (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and moves_device(expr)):
        return False
    return not any(
        isinstance(a, ast.Constant) and a.value == "cpu" for a in (*expr.args, *(k.value for k in expr.keywords))
    )


def _dataset_class(classes: ClassKinds, name: str) -> ast.ClassDef | None:
    """Class `name` if it derives from torch's Dataset, directly or through project classes (the inference's
    hierarchy)."""
    cls = classes.summary.class_defs.get(name)
    return cls if cls is not None and classes.derives_from(cls, DATASET_BASES) else None


def _cuda_literal(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Constant) and isinstance(expr.value, str) and expr.value.startswith("cuda")


def _targets(node: ast.Assign | ast.AnnAssign | ast.AugAssign) -> list[ast.expr]:
    return list(node.targets) if isinstance(node, ast.Assign) else [node.target]


def _self_attribute(expr: ast.expr) -> str | None:
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
        return expr.attr
    return None


def _empty(value: ast.expr) -> bool:
    if isinstance(value, (ast.List, ast.Dict)):
        return not (value.elts if isinstance(value, ast.List) else value.keys)
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in ("list", "dict")


def _built_whole(summary: ModuleSummary, value: ast.expr) -> bool:
    """`[parse(l) for l in f]`, `f.readlines()`, `json.load(f)`: many Python objects at once."""
    if isinstance(value, (ast.ListComp, ast.DictComp)):
        element = value.elt if isinstance(value, ast.ListComp) else value.value
        return not any(_literal_range(g.iter) for g in value.generators) and _python_objects(summary, element)
    if isinstance(value, ast.Call):
        if isinstance(value.func, ast.Attribute) and value.func.attr == "readlines":
            return True
        return qualify(summary, value.func) in ("json.load", "json.loads")
    return False


def _grown_in_loop(summary: ModuleSummary, init: ast.FunctionDef, attr: str) -> bool:
    """`self.attr.append(v)` / `self.attr[k] = v` in a loop of `__init__`, never with a tensor or array."""
    grown = False
    for loop in ast.walk(init):
        if not isinstance(loop, (ast.For, ast.While)) or (isinstance(loop, ast.For) and _literal_range(loop.iter)):
            continue
        for n in ast.walk(loop):
            if (
                isinstance(n, ast.Call)
                and isinstance(n.func, ast.Attribute)
                and n.func.attr in _GROW
                and _self_attribute(n.func.value) == attr
            ):
                if not all(_python_objects(summary, a) for a in n.args):
                    return False
                grown = True
            elif isinstance(n, ast.Assign) and any(
                isinstance(t, ast.Subscript) and _self_attribute(t.value) == attr for t in n.targets
            ):
                if not _python_objects(summary, n.value):
                    return False
                grown = True
    return grown


def _opens_files(summary: ModuleSummary, getitem: ast.FunctionDef, attr: str) -> bool:
    """`__getitem__` passes `self.attr[i]` (or a name unpacked from it) to a call that opens or loads a file."""
    names: set[str] = set()
    for n in ast.walk(getitem):
        if isinstance(n, ast.Assign) and any(
            isinstance(s, ast.Subscript) and _self_attribute(s.value) == attr for s in ast.walk(n.value)
        ):
            names.update(t.id for target in n.targets for t in ast.walk(target) if isinstance(t, ast.Name))
    for n in ast.walk(getitem):
        if not isinstance(n, ast.Call):
            continue
        q = qualify(summary, n.func) or ""
        last = q.rpartition(".")[2]
        if last not in _FILE_READERS and not q.startswith(_FILE_LIBRARIES):
            continue
        for arg in (*n.args, *(k.value for k in n.keywords)):
            for inner in ast.walk(arg):
                if (isinstance(inner, ast.Name) and inner.id in names) or (
                    isinstance(inner, ast.Subscript) and _self_attribute(inner.value) == attr
                ):
                    return True
    return False


def _literal_range(expr: ast.expr) -> bool:
    return (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Name)
        and expr.func.id == "range"
        and all(isinstance(a, ast.Constant) for a in expr.args)
    )


def _python_objects(summary: ModuleSummary, value: ast.expr) -> bool:
    """Not a tensor or array: a call of torch / numpy / pandas / h5py / PIL makes one (or an image)."""
    for n in ast.walk(value):
        if isinstance(n, ast.Call):
            q = qualify(summary, n.func) or ""
            if q.startswith(_ARRAY_LIBRARIES):
                return False
    return True
