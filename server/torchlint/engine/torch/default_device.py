"""Tensors created on the default device: `torch.randn(n)` without `device=`.

Such a tensor lives on the CPU whatever device the model was moved to, so it meets CUDA tensors
with a device-mismatch error (TL304 in `forward`, TL301 in a training loop). A 0-dim tensor
(`torch.tensor(2.0)`, `torch.zeros(())`) mixes with tensors on any device and does not count. Unless the
program changes the default device (`torch.set_default_device("cuda")`, cleanrl's ppo_trxl under `--cuda`): then
factories allocate where it says, and "created on the CPU" is not proven.
"""

from __future__ import annotations

from pathlib import Path

import libcst as cst

from torchlint.engine.core.callargs import get_arg, has_star
from torchlint.engine.semantic.names import Imports
from torchlint.engine.semantic.project import Project

SET_DEFAULT_DEVICE = "set_default_device"

CREATE_ON_CPU = frozenset(
    "zeros ones empty full rand randn randint randperm arange linspace logspace eye tensor "
    "FloatTensor LongTensor DoubleTensor HalfTensor BoolTensor IntTensor ByteTensor Tensor".split()
)
LEGACY = frozenset(n for n in CREATE_ON_CPU if n.endswith("Tensor"))  # no `device=` parameter


def default_device_factory(call: cst.Call, imports: Imports) -> str | None:
    """The factory's name (`randn`) if `call` creates a tensor with dimensions on the default device."""
    q = imports.qualname(call.func)
    if q is None or q.rpartition(".")[0] != "torch" or q[6:] not in CREATE_ON_CPU:
        return None
    if get_arg(call, "device") is not None or has_star(call):
        return None
    fn = q[6:]
    if fn == "tensor" and (not call.args or not isinstance(call.args[0].value, (cst.List, cst.Tuple, cst.ListComp))):
        return None  # a scalar, or a copy of an existing tensor (which keeps no device of its own here)
    return None if _zero_dim(call) else fn


def _zero_dim(call: cst.Call) -> bool:
    """`torch.rand([])`, `torch.zeros(())`: a 0-dim tensor."""
    sizes = [a.value for a in call.args if a.keyword is None or a.keyword.value == "size"]
    return bool(sizes) and all(isinstance(s, (cst.Tuple, cst.List)) and not s.elements for s in sizes)


def program_sets_default_device(
    calls_it: bool, project: Project | None, here: Path, imports: dict[str, str], is_program: bool
) -> bool:
    """The program a file runs in may call `torch.set_default_device`: the file itself (`calls_it`), the
    project modules it imports, or (a module others import) the project files that import it or, none found,
    any that calls it. Where in the run it happens is not followed: anywhere makes the CPU default unproven."""
    if calls_it:
        return True
    if project is None:
        return False
    if any(SET_DEFAULT_DEVICE in m.called for m in project.imported_by(here, imports)):
        return True
    if is_program:
        return False
    callers = [s for s in project.calling(SET_DEFAULT_DEVICE) or [] if s.path != here]  # here: its text, above
    importers = [s for s in callers if project.imports_module(s, here)]
    return bool(importers) or (bool(callers) and project.importers(here) == [])
