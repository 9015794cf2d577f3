"""DDP checks: a process group before DDP/DistributedSampler (TL402), the model on its device before
it is wrapped (TL401), and a shuffling DistributedSampler told the epoch (TL403)."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DistributedSampler

from torchlint.probe.modes import State
from torchlint.probe.sites import Site


class DistributedChecks:
    def __init__(self, state: State) -> None:
        self.state = state
        # id(module) -> (the module, where it was wrapped on the CPU)
        self.wrapped: dict[int, tuple[weakref.ref[nn.Module], Site | None]] = {}
        self.epochs: dict[int, list[int]] = {}  # id(sampler) -> epochs it was iterated in
        self.undo: list[Callable[[], None]] = []

    def install(self) -> None:
        self._before(DistributedDataParallel, "__init__", self._on_wrap)
        self._before(DistributedSampler, "__init__", self._on_sampler)
        self._before(DistributedSampler, "__iter__", self._on_iterate)

    def uninstall(self) -> None:
        for undo in reversed(self.undo):
            undo()

    def _before(self, owner: type, name: str, check: Callable[..., None]) -> None:
        original = owner.__dict__[name]
        state = self.state

        def wrapper(this: object, *args: Any, **kwargs: Any) -> Any:
            if not state.busy:
                state.busy += 1
                try:
                    check(this, *args, **kwargs)
                finally:
                    state.busy -= 1
            return original(this, *args, **kwargs)

        setattr(owner, name, wrapper)
        self.undo.append(lambda: setattr(owner, name, original))

    def _missing_group(self, what: str) -> None:
        if not (dist.is_available() and dist.is_initialized()):
            self.state.obs.add(
                "process-group-missing",
                self.state.attributor.site(callers=True),
                f"`{what}` was created before `torch.distributed.init_process_group(...)`",
                {"what": what},
            )

    def _on_wrap(self, ddp: DistributedDataParallel, module: nn.Module, *args: object, **kwargs: object) -> None:
        self._missing_group("DistributedDataParallel")
        devices = {self.state.device(p) for p in module.parameters()}
        if devices == {"cpu"} and self.state.simulate or devices == {"cpu"} and kwargs.get("device_ids"):
            self.wrapped[id(module)] = (weakref.ref(module), self.state.attributor.site(callers=True))

    def moved(self, module: nn.Module, site: Site | None) -> None:
        """A module was moved: was it wrapped in DDP while still on the CPU?"""
        entry = self.wrapped.pop(id(module), None)
        if entry is None or entry[0]() is None or entry[1] is None:
            return
        self.state.obs.add(
            "ddp-before-device-move",
            entry[1],
            f"`{type(module).__name__}` was wrapped in DistributedDataParallel while its parameters were on the "
            "CPU and moved afterwards: DDP's buckets and broadcast used the old device",
            {"module": type(module).__name__, "sites": [site.to_json()] if site else []},
        )

    def _on_sampler(self, sampler: DistributedSampler[object], *args: object, **kwargs: object) -> None:
        if kwargs.get("num_replicas") is None or kwargs.get("rank") is None:
            self._missing_group("DistributedSampler")

    def _on_iterate(self, sampler: DistributedSampler[object]) -> None:
        if not getattr(sampler, "shuffle", False):
            return
        seen = self.epochs.setdefault(id(sampler), [])
        if sampler.epoch in seen:
            self.state.obs.add(
                "sampler-epoch-not-set",
                self.state.attributor.site(callers=True),
                f"a shuffling DistributedSampler was iterated again with epoch {sampler.epoch}: the same order "
                "as before; call `sampler.set_epoch(epoch)` at the start of each epoch",
                {"epoch": sampler.epoch, "iterations": len(seen) + 1},
            )
        seen.append(sampler.epoch)
