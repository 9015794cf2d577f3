"""Wire the probe together in the child: modes, hooks, simulated CUDA and line coverage."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator
from types import CodeType
from typing import TextIO

import torch
from torch.utils._python_dispatch import _get_current_dispatch_mode

from torchlint.probe import not_simulated, spawned
from torchlint.probe.coverage import LineCoverage
from torchlint.probe.distributed_checks import DistributedChecks
from torchlint.probe.json_types import Progress
from torchlint.probe.modes import DispatchMode, FunctionMode, State
from torchlint.probe.observations import Observations
from torchlint.probe.sampling import Sampling
from torchlint.probe.simulated_cuda import SimulatedCuda
from torchlint.probe.simulated_gpus import DEFAULT_GPU
from torchlint.probe.sites import Attributor
from torchlint.probe.training import TrainingChecks


class Probe:
    def __init__(
        self,
        script: str,
        max_steps: int | None,
        simulate: bool | None,
        gpu: str = DEFAULT_GPU,
        device_count: int = 1,
        every_step: bool = False,
    ) -> None:
        real_cuda = torch.cuda.is_available()
        self.simulate = (not real_cuda) if simulate is None else bool(simulate)
        self.script = script
        self.obs = Observations()
        self.state = State(self.obs, Attributor(), self.simulate, track_devices=real_cuda)
        self.state.device_count = max(1, device_count)
        self.training = TrainingChecks(self.state, script, max_steps)
        self.coverage = LineCoverage(script)
        self.distributed = DistributedChecks(self.state)
        self.on_checkpoint: Callable[[], None] | None = None
        self.gpu = gpu
        self.cuda = SimulatedCuda(self.state.tags, gpu, device_count)
        self.sampling = Sampling(enabled=not every_step)
        self._function: FunctionMode | None = None  # entered while watching, and between windows when simulating
        self._dispatch: DispatchMode | None = None  # entered while watching
        self._undo: list[Callable[[], None]] = []
        self._paused = False  # the function mode is off inside an optimizer step between windows
        self._state_sizes: dict[int, int] = {}  # id(optimizer) -> len(optimizer.state) when last tagged

    def install(self, code: CodeType) -> None:
        if self.simulate:
            self._undo += self.cuda.install()
            self._undo += spawned.install(self.gpu, self.state.device_count)
            self._undo += not_simulated.install()
        elif torch.cuda.is_available():
            self._sync_debug()
        self.distributed.install()
        self.training.on_move = self.distributed.moved
        self.training.install()
        self.training.on_step = self._on_step
        if self.simulate:
            self.training.pause_following = self._pause_following
            self.training.resume_following = self._resume_following
        self.coverage.start(code)

    def uninstall(self) -> None:
        self.coverage.stop()
        self.training.uninstall()
        self.distributed.uninstall()
        for undo in reversed(self._undo):
            undo()

    @contextlib.contextmanager
    def modes(self) -> Iterator[None]:
        self._enter_modes()
        try:
            yield
        finally:
            self._leave_modes(keep_function=False)
            self._function = self._dispatch = None

    def _enter_modes(self) -> None:
        if self._function is None:
            self._function = FunctionMode(self.state)
            self._function.__enter__()  # type: ignore[no-untyped-call]  # unannotated in torch
        self._dispatch = DispatchMode(self.state)
        self._dispatch.__enter__()  # type: ignore[no-untyped-call]  # unannotated in torch

    def _leave_modes(self, keep_function: bool) -> bool:
        """Pop the dispatch mode (and the function mode unless kept), only when nothing the script pushed
        sits above them."""
        function, dispatch = self._function, self._dispatch
        if function is None:  # outside `modes()`: nothing to pop
            return False
        if dispatch is not None and _get_current_dispatch_mode() is not dispatch:
            return False
        if not keep_function:
            depth = torch._C._len_torch_function_stack()
            if not depth or torch._C._get_function_stack_at(depth - 1) is not function:
                return False
        if dispatch is not None:
            dispatch.__exit__(None, None, None)  # type: ignore[no-untyped-call]  # unannotated in torch
            self._dispatch = None
        if not keep_function:
            function.__exit__(None, None, None)
            self._function = None
        return True

    def _on_step(self) -> None:
        """Enter or leave a watched window. Between windows simulated CUDA keeps the function mode, which
        follows device tags at the level of torch functions; the dispatch mode (every aten op) is the cost."""
        watch = self.sampling.watches(self.training.steps + 1)
        if watch and not self.state.watching:
            self._enter_modes()
            self.state.watching = True
            self.training.watch_modules(True)
            if self.simulate and self._function is not None:
                self._function.leaf_grads.window_opens()
        elif not watch and self.state.watching and self._leave_modes(keep_function=self.simulate):
            self.state.watching = False
            self.training.watch_modules(False)
        if self.on_checkpoint is not None:
            self.on_checkpoint()

    def _pause_following(self) -> bool:
        """Between windows an optimizer step runs without the function mode: its internals are most of a
        small model's torch calls and nothing is checked there. The only tensors it makes that outlive it
        are the state of a first step, tagged with its parameter's device on resuming (as `zeros_like(p)`
        is tagged op by op). `zero_grad` makes no tensor at all."""
        function = self._function
        if function is None or self._paused or self.state.watching:
            return False
        depth = torch._C._len_torch_function_stack()
        if not depth or torch._C._get_function_stack_at(depth - 1) is not function:
            return False  # the script pushed a mode of its own above ours: leave the stack alone
        function.__exit__(None, None, None)
        self._paused = True
        return True

    def _resume_following(self, optimizer: torch.optim.Optimizer | None) -> None:
        if not self._paused:
            return
        if optimizer is not None:
            self._tag_new_state(optimizer)
        if self._function is not None:  # None only once `modes()` has ended
            self._function.__enter__()  # type: ignore[no-untyped-call]  # unannotated in torch
        self._paused = False

    def _tag_new_state(self, optimizer: torch.optim.Optimizer) -> None:
        size = len(optimizer.state)
        if self._state_sizes.get(id(optimizer)) == size:
            return
        self._state_sizes[id(optimizer)] = size
        tags = self.state.tags
        for param, state in optimizer.state.items():
            device = tags.get(param)
            if device == "cpu":
                continue
            for value in state.values():
                if isinstance(value, torch.Tensor) and value is not param and value.shape == param.shape:
                    tags.set(value, device)

    def _sync_debug(self) -> None:
        """On a real GPU, PyTorch's own sync detector reports syncs inside CUDA kernels too."""
        torch.cuda.set_sync_debug_mode("warn")
        shown = warnings.showwarning
        obs, attributor, state = self.obs, self.state.attributor, self.state

        def show(
            message: Warning | str,
            category: type[Warning],
            filename: str,
            lineno: int,
            file: TextIO | None = None,
            line: str | None = None,
        ) -> None:
            text = str(message)
            if "synchroniz" in text:
                if state.busy:  # the probe's own checks (all-zero gradients) sync too
                    return
                obs.add(
                    "host-sync",
                    attributor.site(),
                    f"host-device sync: {text.splitlines()[0]}",
                    {"op": "cuda-sync-debug", "via": "torch.cuda.set_sync_debug_mode"},
                    key="debug",
                )
                return
            shown(message, category, filename, lineno, file, line)

        warnings.showwarning = show
        self._undo += [
            lambda: setattr(warnings, "showwarning", shown),
            lambda: torch.cuda.set_sync_debug_mode("default"),
        ]

    def result(self) -> Progress:
        self.training.finish()
        items = [o for o in self.obs.items() if o.kind != "host-sync" or self._every_step(o.steps)]
        return {
            "steps": self.training.steps,
            # the steps that ran, and the unfinished one after them when something happened there
            "watched_steps": self.sampling.watched_between(
                1, max([self.training.steps, *(max(o.steps) for o in items if o.steps)])
            ),
            "step_kind": "backward" if self.training.steps and not self.training.optimizer_made else "optimizer",
            "observations": [o.to_json() for o in items],
            "devices_used": sorted(self.state.tags.devices | self.state.devices_used),
            "executed_lines": sorted(self.coverage.lines),
        }

    def _every_step(self, steps: set[int]) -> bool:
        """A sync is part of the loop when it fired in two watched steps or more and in at least half of
        the watched steps between its first and last (a print every 100 steps or a per-epoch accuracy is
        fine)."""
        return len(steps) >= 2 and 2 * len(steps) >= self.sampling.watched_between(min(steps), max(steps))
