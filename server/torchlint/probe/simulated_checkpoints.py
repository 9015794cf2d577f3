"""Checkpoints under simulated CUDA behave as on a GPU machine.

`torch.load` restores each storage where a GPU machine would put it: at its saved location
(`cuda:0` for a checkpoint saved on a GPU), or where `map_location` (a device, a dict of
locations, a function) sends it; the data stays on the CPU, tagged with that device, and a
device past the simulated count fails as on a GPU. `torch.save` records a tagged storage at its
simulated device, as a GPU run would write it. `storage.cuda()` tags the storage it returns.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.serialization as serialization

from torchlint.probe.device_tags import DeviceTags, parse_device


def install(tags: DeviceTags, count: int) -> list[Callable[[], None]]:
    """Patch `torch.load`, the location tag `torch.save` writes and `UntypedStorage.cuda`; returns the undo
    closures."""
    load, location_tag, storage_cuda = torch.load, serialization.location_tag, torch.UntypedStorage.cuda

    def restore(saved: Any, target: str | None) -> torch.UntypedStorage:
        storage: torch.UntypedStorage = getattr(saved, "_untyped_storage", saved)  # a TypedStorage's, or itself
        if target and target.startswith("cuda"):
            index = int(target.split(":")[1]) if ":" in target else 0
            if index >= count:
                raise RuntimeError(
                    f"Attempting to deserialize object on CUDA device {index} but torch.cuda.device_count() is "
                    f"{count}. Please use torch.load with map_location to map your storages to an existing device."
                )
            tags.set_storage(storage, f"cuda:{index}")
        return storage

    def simulated_load(f: Any, map_location: Any = None, *args: Any, **kwargs: Any) -> Any:
        def where(storage: Any, location: str) -> Any:
            if map_location is None:
                return restore(storage, parse_device(location))
            if isinstance(map_location, dict):
                return restore(storage, parse_device(map_location.get(location, location)))
            if callable(map_location):
                out = map_location(storage, location)
                return restore(storage, parse_device(location)) if out is None else out
            return restore(storage, parse_device(map_location))

        return load(f, where, *args, **kwargs)

    def simulated_location(storage: Any) -> str:
        device = tags.of_storage(getattr(storage, "_untyped_storage", storage))
        if device is not None:
            return device
        tag: str = location_tag(storage)
        return tag

    def to_cuda(storage: Any, device: object = None, non_blocking: bool = False) -> torch.UntypedStorage:
        return restore(storage, parse_device(device if device is not None else "cuda"))

    torch.load = simulated_load
    serialization.location_tag = simulated_location
    torch.UntypedStorage.cuda = to_cuda  # type: ignore[method-assign, assignment]  # patched on purpose
    return [
        lambda: setattr(torch, "load", load),
        lambda: setattr(serialization, "location_tag", location_tag),
        lambda: setattr(torch.UntypedStorage, "cuda", storage_cuda),
    ]
