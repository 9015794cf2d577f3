"""Tensors created on the default device: `torch.randn(n)` without `device=`.

Such a tensor lives on the CPU whatever device the model was moved to, so it meets CUDA tensors
with a device-mismatch error (TL304 in `forward`, TL301 in a training loop). A 0-dim tensor
(`torch.tensor(2.0)`, `torch.zeros(())`) mixes with tensors on any device and does not count.
"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.callargs import get_arg, has_star
from torchlint.engine.semantic.names import Imports

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
