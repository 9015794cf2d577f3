"""Processes the script starts with the `spawn` method run under the same simulated CUDA.

A `fork`ed process inherits the simulation; a spawned one (`torch.multiprocessing.spawn`,
`mp.get_context("spawn")`, DataLoader workers with that context) is a fresh interpreter
that would see a CPU-only torch. Its command line gets a prologue that installs simulated
CUDA and follows device tags there, as between watched steps; it reports nothing itself.
"""

from __future__ import annotations

import json
import multiprocessing.spawn as mp_spawn
import os
from collections.abc import Callable

_PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def install(gpu: str, device_count: int) -> list[Callable[[], None]]:
    """Give spawned processes the prologue; returns the undo closures."""
    command_line = mp_spawn.get_command_line
    config = json.dumps({"gpu": gpu, "device_count": device_count})

    def simulated_command_line(**kwds: object) -> list[str]:
        command = command_line(**kwds)
        if "-c" not in command:  # a frozen interpreter: nothing to prepend to
            return command
        at = command.index("-c") + 1
        prologue = (
            f"import sys; sys.path.insert(0, {_PACKAGE_PARENT!r}); from torchlint.probe import spawned; "
            f"sys.path.pop(0); spawned.simulate({config!r}); "
        )
        return [*command[:at], prologue + command[at], *command[at + 1 :]]

    mp_spawn.get_command_line = simulated_command_line
    return [lambda: setattr(mp_spawn, "get_command_line", command_line)]


def simulate(config: str) -> None:
    """In the spawned process: simulated CUDA, and device tags followed by the function mode for good."""
    from torchlint.probe.modes import FunctionMode, State
    from torchlint.probe.observations import Observations
    from torchlint.probe.simulated_cuda import SimulatedCuda
    from torchlint.probe.sites import Attributor

    options = json.loads(config)
    state = State(Observations(), Attributor(), simulate=True, track_devices=True)
    state.device_count = options["device_count"]
    state.watching = False
    SimulatedCuda(state.tags, options["gpu"], options["device_count"]).install()
    FunctionMode(state).__enter__()  # type: ignore[no-untyped-call]  # unannotated in torch
