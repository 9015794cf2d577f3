"""Device arguments under simulated CUDA: a bare index means a CUDA device, and an index must exist.

On a GPU machine `torch.device(0)`, `model.to(0)` and `.to(local_rank)` name the CUDA device of
that index; a CPU-only build asks for an accelerator and fails. Here they name the simulated
device, and an index past the simulated device count fails as CUDA does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

_RealDevice = torch.device
INVALID_ORDINAL = "CUDA error: invalid device ordinal"


def check_ordinal(device: str | None, count: int) -> None:
    """Raise as CUDA does when `device` ("cuda:N") is not one of the `count` devices."""
    if device and device.startswith("cuda:") and int(device.split(":")[1]) >= count:
        raise RuntimeError(f"{INVALID_ORDINAL} ({device}; {count} simulated device{'s' if count != 1 else ''})")


def _index_as_cuda(value: object) -> object:
    return f"cuda:{value}" if isinstance(value, int) and not isinstance(value, bool) else value


class _DeviceType(type):
    """Every real device is still a `torch.device`."""

    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, _RealDevice)


class device(metaclass=_DeviceType):  # stands in for `torch.device`
    """`torch.device(0)` is the CUDA device 0; every other form is PyTorch's own."""

    def __new__(cls, *args: Any, **kwargs: Any) -> torch.device:  # type: ignore[misc]  # a real torch.device, on purpose
        if len(args) == 1 and not kwargs:
            args = (_index_as_cuda(args[0]),)
        return _RealDevice(*args, **kwargs)


def install(count: int) -> list[Callable[[], None]]:
    """Patch `torch.device` and the argument parser of `nn.Module.to`; returns the undo closures."""
    parse_to = torch._C._nn._parse_to

    def parse(*args: Any, **kwargs: Any) -> Any:
        if not args and "device" in kwargs:  # positional: the probe's modes make a `device=` argument real
            args = (kwargs.pop("device"),)
        if args:
            args = (_index_as_cuda(args[0]), *args[1:])
        parsed = parse_to(*args, **kwargs)
        target = parsed[0]
        if target is not None and target.type == "cuda":
            check_ordinal(f"cuda:{target.index or 0}", count)
        return parsed

    torch.device = device  # type: ignore[misc]  # the stand-in, on purpose
    torch._C._nn._parse_to = parse
    return [lambda: setattr(torch, "device", _RealDevice), lambda: setattr(torch._C._nn, "_parse_to", parse_to)]
