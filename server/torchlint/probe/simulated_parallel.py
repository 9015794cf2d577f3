"""`nn.DataParallel` over the simulated devices.

DataParallel moves data with `torch.nn.parallel.comm`, whose C++ kernels need real GPUs; here
each collective is the same moves written with `.to("cuda:N")`, which the probe's modes tag like
any other move. The replicas run one after the other in the calling thread: the probe's modes
are per thread, and device tags must follow the replicas' ops.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.nn.parallel.comm as comm
from torch import nn

_Device = int | str | torch.device  # an index is a CUDA device, as in `comm`


def _on(tensor: torch.Tensor, device: _Device) -> torch.Tensor:
    return tensor.to(f"cuda:{device}" if isinstance(device, int) and device >= 0 else device)


def _given(devices: Sequence[_Device] | None) -> Sequence[_Device]:
    if devices is None:  # `comm` then writes into `out=` tensors: DataParallel never asks for that
        raise TypeError("simulated CUDA: a collective without `devices` is not simulated")
    return devices


def scatter(
    tensor: torch.Tensor,
    devices: Sequence[_Device] | None = None,
    chunk_sizes: Sequence[int] | None = None,
    dim: int = 0,
    streams: object = None,
    *,
    out: object = None,
) -> tuple[torch.Tensor, ...]:
    targets = _given(devices)
    sizes = list(chunk_sizes) if chunk_sizes is not None else None
    chunks = tensor.split(sizes, dim) if sizes else tensor.chunk(len(targets), dim)  # type: ignore[no-untyped-call]  # unannotated in torch
    return tuple(_on(chunk.contiguous(), device) for chunk, device in zip(chunks, targets))


def gather(
    tensors: Sequence[torch.Tensor], dim: int = 0, destination: _Device | None = None, *, out: object = None
) -> torch.Tensor:
    target = destination if destination is not None else tensors[0].get_device()
    return torch.cat([_on(t, target) for t in tensors], dim)


def broadcast(
    tensor: torch.Tensor, devices: Sequence[_Device] | None = None, *, out: object = None
) -> tuple[torch.Tensor, ...]:
    return tuple(_on(tensor, device) for device in _given(devices))


def broadcast_coalesced(
    tensors: Sequence[torch.Tensor], devices: Sequence[_Device], buffer_size: int = 0
) -> list[list[torch.Tensor]]:
    return [[_on(t, device) for t in tensors] for device in devices]


def reduce_add(inputs: Sequence[torch.Tensor], destination: _Device | None = None) -> torch.Tensor:
    target = destination if destination is not None else inputs[0].get_device()
    total = _on(inputs[0], target).clone()
    for t in inputs[1:]:
        total += _on(t, target)
    return total


def reduce_add_coalesced(
    inputs: Sequence[Sequence[torch.Tensor]], destination: _Device | None = None, buffer_size: int = 0
) -> list[torch.Tensor]:
    return [reduce_add(list(column), destination) for column in zip(*inputs)]


def parallel_apply(
    modules: Sequence[nn.Module],
    inputs: Sequence[object],
    kwargs_tup: Sequence[dict[str, Any]] | None = None,
    devices: object = None,
) -> list[Any]:
    kwargs_tup = kwargs_tup or ({},) * len(modules)
    outputs = []
    for module, args, kwargs in zip(modules, inputs, kwargs_tup):
        outputs.append(module(*(args if isinstance(args, (list, tuple)) else (args,)), **kwargs))
    return outputs


def install() -> list[Callable[[], None]]:
    """Patch the collectives DataParallel calls; returns the undo closures."""
    # `torch.nn.parallel.data_parallel` is also a function of that package: import the module by name.
    data_parallel = importlib.import_module("torch.nn.parallel.data_parallel")
    undo: list[Callable[[], None]] = []
    for owner, value in (
        *((comm, f) for f in (scatter, gather, broadcast, broadcast_coalesced, reduce_add, reduce_add_coalesced)),
        (data_parallel, parallel_apply),
    ):
        name, old = value.__name__, getattr(owner, value.__name__)
        setattr(owner, name, value)
        undo.append(functools.partial(setattr, owner, name, old))
    return undo
