"""`nn.DataParallel` over the simulated devices.

DataParallel moves data with `torch.nn.parallel.comm`, whose C++ kernels need real GPUs; here
each collective is the same moves written with `.to("cuda:N")`, which the probe's modes tag like
any other move. The replicas run one after the other in the calling thread: the probe's modes
are per thread, and device tags must follow the replicas' ops.
"""

from __future__ import annotations

import importlib

import torch
import torch.nn.parallel.comm as comm


def _on(tensor: torch.Tensor, device) -> torch.Tensor:
    return tensor.to(f"cuda:{device}" if isinstance(device, int) and device >= 0 else device)


def scatter(tensor, devices=None, chunk_sizes=None, dim=0, streams=None, *, out=None):
    sizes = list(chunk_sizes) if chunk_sizes is not None else None
    chunks = tensor.split(sizes, dim) if sizes else tensor.chunk(len(devices), dim)
    return tuple(_on(chunk.contiguous(), device) for chunk, device in zip(chunks, devices))


def gather(tensors, dim=0, destination=None, *, out=None):
    target = destination if destination is not None else tensors[0].get_device()
    return torch.cat([_on(t, target) for t in tensors], dim)


def broadcast(tensor, devices=None, *, out=None):
    return tuple(_on(tensor, device) for device in devices)


def broadcast_coalesced(tensors, devices, buffer_size=0):
    return [[_on(t, device) for t in tensors] for device in devices]


def reduce_add(inputs, destination=None):
    target = destination if destination is not None else inputs[0].get_device()
    total = _on(inputs[0], target).clone()
    for t in inputs[1:]:
        total += _on(t, target)
    return total


def reduce_add_coalesced(inputs, destination=None, buffer_size=0):
    return [reduce_add(list(column), destination) for column in zip(*inputs)]


def parallel_apply(modules, inputs, kwargs_tup=None, devices=None):
    kwargs_tup = kwargs_tup or ({},) * len(modules)
    outputs = []
    for module, args, kwargs in zip(modules, inputs, kwargs_tup):
        outputs.append(module(*(args if isinstance(args, (list, tuple)) else (args,)), **kwargs))
    return outputs


def install() -> list:
    """Patch the collectives DataParallel calls; returns the undo closures."""
    # `torch.nn.parallel.data_parallel` is also a function of that package: import the module by name.
    data_parallel = importlib.import_module("torch.nn.parallel.data_parallel")
    undo = []
    for owner, value in (
        *((comm, f) for f in (scatter, gather, broadcast, broadcast_coalesced, reduce_add, reduce_add_coalesced)),
        (data_parallel, parallel_apply),
    ):
        name, old = value.__name__, getattr(owner, value.__name__)
        setattr(owner, name, value)
        undo.append(lambda owner=owner, name=name, old=old: setattr(owner, name, old))
    return undo
