"""The class a call builds, this file's or another project file's, and what the torch analyses read of it.

`DataLoader(Lines(path), num_workers=4)` or `model(x, lengths)` is judged by the code of a class that may live
in another file: its `__getitem__`, its `__init__`, its `forward`. The class is found as the inference finds a
name's definition (`Semantics.definition`, through the project index), and read over its file's `ast`
summary by the torch analyses (dataset_storage, device_moves). Rules ask here, so none holds another file's
tree: they get the class's name, where it lives, and the answers.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import libcst as cst

from torchlint.engine.semantic.inference import ClassKinds
from torchlint.engine.semantic.project import ModuleSummary
from torchlint.engine.semantic.semantics import Semantics
from torchlint.engine.torch.dataset_storage import ObjectStore, cuda_in_getitem, python_object_store
from torchlint.engine.torch.device_moves import cpu_only_parameters


@dataclass(frozen=True, eq=False)
class BuiltClass:
    """A class some call of the linted file instantiates."""

    name: str
    file: Path | None  # the project file that defines it; None: the linted file
    _classes: Callable[[], ClassKinds]  # its file's classes, as the inference reads them (asked lazily)
    _summary: ModuleSummary

    def cuda_in_getitem(self) -> int | None:
        """The line where a Dataset class's `__getitem__` puts a tensor on CUDA (dataset_storage)."""
        return cuda_in_getitem(self._classes(), self.name)

    def python_object_store(self) -> ObjectStore | None:
        """The attribute a Dataset class keeps its samples in as Python objects (dataset_storage)."""
        return python_object_store(self._classes(), self.name)

    def forward_slots_to_cpu_only(self) -> tuple[set[int], set[str]]:
        """(positions after `self`, names) of `forward`'s parameters handed unchanged to an argument that must
        stay on the CPU (`pack_padded_sequence(x, lengths)`, device_moves.cpu_only_parameters)."""
        body = self._summary.class_defs[self.name].body
        forward = next((f for f in body if isinstance(f, ast.FunctionDef) and f.name == "forward"), None)
        return cpu_only_parameters(forward, as_is=True) if forward is not None else (set(), set())


class BuiltClasses:
    """The classes the linted file's calls build, each found once (`of`)."""

    def __init__(self, semantics: Semantics, here: Path) -> None:
        self.semantics = semantics
        self.here = here  # the linted file's path as given
        self._found: dict[tuple[Path, str], BuiltClass] = {}

    def of(self, call: cst.Call) -> BuiltClass | None:
        """The class `call` instantiates (this file's or a project file's), None when it is not one."""
        found = self.semantics.definition(call.func)
        if found is None or found[1] not in found[0].class_defs:
            return None
        summary, name = found
        key = (summary.path, name)
        built = self._found.get(key)
        if built is None:
            here = summary.path == self.here or not summary.name
            semantics = self.semantics
            built = self._found[key] = BuiltClass(
                name, None if here else summary.path, lambda: semantics.class_kinds(summary), summary
            )
        return built
