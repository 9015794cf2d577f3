"""Random number generators of simulated CUDA devices: one CPU generator per device.

`torch.cuda.manual_seed/seed/initial_seed/get_rng_state/set_rng_state` (and their `_all` forms)
act on these generators, so seeding code, `torch.random.fork_rng` and `torch.compile` (which reads
the RNG state) run as on a GPU; `torch.Generator(device="cuda")` is a CPU generator that reports
its CUDA device. Random tensors themselves are drawn on the CPU, from the generator the op gets.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import SupportsInt

import torch

from torchlint.probe.device_tags import parse_device, required_device

_RealGenerator = torch._C.Generator
_DEFAULT_SEED = 67280421310721  # what a fresh CUDA generator starts from, as on the CPU


class _GeneratorType(type(_RealGenerator)):  # type: ignore[misc]  # a base computed at run time
    """Every real generator is still a `torch.Generator`."""

    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, _RealGenerator)


class Generator(_RealGenerator, metaclass=_GeneratorType):
    """`torch.Generator(device=...)`: a CPU generator that says which device it was made for."""

    def __new__(cls, device: object = None) -> Generator:
        return _RealGenerator.__new__(cls)

    def __init__(self, device: object = None) -> None:
        self._logical = required_device(device) if device is not None else "cpu"

    @property
    def device(self) -> torch.device:  # type: ignore[override]  # torch's stub has it writable; it is not
        return torch.device(self._logical)


class CudaGenerators:
    """The default generators of the simulated devices and the `torch.cuda` random API over them."""

    def __init__(self, device_count: int, current: Callable[[], int]) -> None:
        self.generators = tuple(Generator(f"cuda:{i}") for i in range(device_count))
        for g in self.generators:
            g.manual_seed(_DEFAULT_SEED)
        self._current = current  # () -> the current device index

    def _of(self, device: object = "cuda") -> Generator:
        if isinstance(device, int):
            index = device
        else:
            name = parse_device(device) if device != "cuda" else None
            index = int(name.split(":")[1]) if name and name.startswith("cuda:") else self._current()
        if not 0 <= index < len(self.generators):
            raise RuntimeError("CUDA error: invalid device ordinal")
        return self.generators[index]

    def api(self) -> dict[str, object]:
        """Name -> function, for `torch.cuda` and `torch.cuda.random`."""

        def seed_all(seed: int | None = None) -> None:
            for g in self.generators:
                g.manual_seed(seed) if seed is not None else g.seed()

        def set_states(states: Iterable[torch.Tensor]) -> None:
            for g, state in zip(self.generators, states):
                g.set_state(state)

        def manual_seed(seed: SupportsInt) -> None:
            self._of().manual_seed(int(seed))

        def seed() -> None:
            self._of().seed()

        def set_state(new_state: torch.Tensor, device: object = "cuda") -> None:
            self._of(device).set_state(new_state.clone())

        return {
            "manual_seed": manual_seed,
            "manual_seed_all": lambda seed: seed_all(int(seed)),
            "seed": seed,
            "seed_all": lambda: seed_all(),
            "initial_seed": lambda: self._of().initial_seed(),
            "get_rng_state": lambda device="cuda": self._of(device).get_state(),
            "get_rng_state_all": lambda: [g.get_state() for g in self.generators],
            "set_rng_state": set_state,
            "set_rng_state_all": set_states,
            "default_generators": self.generators,
        }
