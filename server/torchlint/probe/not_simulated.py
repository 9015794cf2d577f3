"""Library features that simulated CUDA does not stand in for, found by running real scripts.

FSDP2 (`fully_shard`) shards parameters as DTensors over a device mesh that it builds from the real
accelerator (the CPU here), so the sharded and gathered parameters live where no device tag follows
them: an FSDP2 script ran to its end with a false device mismatch at every layer. Under simulation
calling it raises `NotSimulated` instead, and the run exits 4 ("simulation does not support ...").
The module is patched when the script imports it (importing FSDP takes seconds: not for every run).
"""

from __future__ import annotations

import functools
import importlib.abc
import sys
from collections.abc import Callable, Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

# module -> (attribute, what the report names)
_FEATURES = {
    "torch.distributed.fsdp": ("fully_shard", "torch.distributed.fsdp.fully_shard (FSDP2)"),
    "torch.distributed.fsdp._fully_shard": ("fully_shard", "torch.distributed.fsdp.fully_shard (FSDP2)"),
}


class NotSimulated(RuntimeError):
    """A call simulated CUDA cannot run faithfully; `what` names it for the report."""

    def __init__(self, what: str) -> None:
        super().__init__(f"simulated CUDA does not support {what}: run it on a GPU (--no-simulate-cuda)")
        self.what = what


def _refuse(module: ModuleType) -> None:
    attribute, what = _FEATURES[module.__name__]
    if hasattr(module, attribute):

        def refused(*args: object, **kwargs: object) -> None:
            raise NotSimulated(what)

        setattr(module, attribute, refused)


class _Loader(importlib.abc.Loader):
    """The module's own loader, then the refusal."""

    def __init__(self, loader: importlib.abc.Loader) -> None:
        self.loader = loader

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self.loader.exec_module(module)
        _refuse(module)


class _Finder(importlib.abc.MetaPathFinder):
    """Patches a module of `_FEATURES` right after it is first imported."""

    def find_spec(
        self, name: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if name not in _FEATURES:
            return None
        for finder in sys.meta_path:
            spec: ModuleSpec | None = (
                None if finder is self else getattr(finder, "find_spec", lambda *a: None)(name, path, target)
            )
            if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
                spec.loader = _Loader(spec.loader)
                return spec
        return None


def install() -> list[Callable[[], None]]:
    """Refuse the features (now, or when their modules are imported); returns the undo closures."""
    undo: list[Callable[[], None]] = []
    for name in _FEATURES:
        module = sys.modules.get(name)
        if module is not None:
            attribute = _FEATURES[name][0]
            old = getattr(module, attribute, None)
            _refuse(module)
            undo.append(functools.partial(setattr, module, attribute, old))
    finder = _Finder()
    sys.meta_path.insert(0, finder)
    undo.append(lambda: sys.meta_path.remove(finder) if finder in sys.meta_path else None)
    return undo
