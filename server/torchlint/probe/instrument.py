"""Wire the probe together in the child: modes, hooks, simulated CUDA and line coverage."""

from __future__ import annotations

import contextlib
import inspect
import warnings
from collections.abc import Callable, Iterator
from types import CodeType, FrameType
from typing import Any, TextIO

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
from torchlint.probe.sites import PROBE_DIR, Attributor
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
        self._function: FunctionMode | None = None  # made by `modes()`, kept for the whole run (its leaf hooks)
        self._dispatch: DispatchMode | None = None
        self._function_on = False  # on the stack: while watching, and between windows when simulating
        self._dispatch_on = False  # on the stack: while watching
        self._undo: list[Callable[[], None]] = []
        self._paused: str | None = None  # inside a call run without the modes: "both" or "function"
        self._library_steps: dict[type, bool] = {}  # optimizer class -> its step() is library code
        self._state_sizes: dict[int, int] = {}  # id(optimizer) -> len(optimizer.state) when last tagged
        self._shown: tuple[int, int, int] | None = None  # what the run had shown when this step's watch began

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
        self.training.pause = self._pause
        self.training.resume = self._resume
        self.coverage.on_new_line = self._new_line
        self.coverage.start(code)

    def uninstall(self) -> None:
        self.coverage.stop()
        self.training.uninstall()
        self.distributed.uninstall()
        for undo in reversed(self._undo):
            undo()

    @contextlib.contextmanager
    def modes(self) -> Iterator[None]:
        self._function = FunctionMode(self.state)
        self._dispatch = DispatchMode(self.state)
        self._enter_modes()
        try:
            yield
        finally:
            self._leave_modes(keep_function=False)
            self._function = self._dispatch = None
            self._function_on = self._dispatch_on = False

    def _enter_modes(self) -> None:
        function, dispatch = self._function, self._dispatch
        if function is None or dispatch is None:  # outside `modes()`: nothing to push
            return
        if not self._function_on:
            function.__enter__()  # type: ignore[no-untyped-call]  # unannotated in torch
            self._function_on = True
        if not self._dispatch_on:
            dispatch.__enter__()  # type: ignore[no-untyped-call]  # unannotated in torch
            self._dispatch_on = True

    def _function_on_top(self) -> bool:
        depth = torch._C._len_torch_function_stack()
        return bool(depth) and torch._C._get_function_stack_at(depth - 1) is self._function

    def _leave_modes(self, keep_function: bool) -> bool:
        """Pop the dispatch mode (and the function mode unless kept), only when nothing the script pushed
        sits above them."""
        function, dispatch = self._function, self._dispatch
        if function is None or dispatch is None:  # outside `modes()`: nothing to pop
            return False
        if self._dispatch_on and _get_current_dispatch_mode() is not dispatch:
            return False
        if not keep_function and self._function_on and not self._function_on_top():
            return False
        if self._dispatch_on:
            dispatch.__exit__(None, None, None)  # type: ignore[no-untyped-call]  # unannotated in torch
            self._dispatch_on = False
        if not keep_function and self._function_on:
            function.__exit__(None, None, None)  # type: ignore[no-untyped-call]  # unannotated in torch
            self._function_on = False
        return True

    def _on_step(self) -> None:
        """Enter or leave a watched window. Between windows simulated CUDA keeps the function mode, which
        follows device tags at the level of torch functions; the dispatch mode (every aten op) is the cost."""
        step = self.training.steps
        if self.state.watching and self.sampling.enabled:
            shown = self._shown_so_far()
            if self.sampling.in_warm_up(step) and shown == self._shown:
                self.sampling.quiet(step)
            elif step in self.sampling.extra and shown != self._shown:
                self.sampling.go_on(step)  # new code showed something: watch it as a warm-up would
            self._shown = shown
        watch = self.sampling.watches(step + 1)
        if watch and not self.state.watching:
            self._open_window()
        elif not watch and self.state.watching and self._leave_modes(keep_function=self.simulate):
            self.state.watching = False
            self.training.watch_modules(False)
        if self.on_checkpoint is not None:
            self.on_checkpoint()

    def _shown_so_far(self) -> tuple[int, int, int]:
        """Observations added, training records made, lines of the script run: what a step showed."""
        return (self.obs.events, self.training.records(), self.coverage.count())

    def _open_window(self) -> None:
        self._shown = self._shown_so_far()
        self._enter_modes()
        self.state.watching = True
        self.training.watch_modules(True)
        if self.simulate and self._function is not None:
            self._function.leaf_grads.window_opens()

    def _new_line(self, frame: FrameType) -> None:
        """A line of the script ran for the first time (an epoch's end, a validation pass, a branch taken
        late): new code is watched, from this line when only the script's own frames are running (no module
        call, backward or optimizer step half done), else from the next step."""
        if self.state.watching or self.state.busy or self._function is None or not self.sampling.enabled:
            return
        step = self.training.steps + 1
        if self._script_only(frame) and self._nothing_above_ours():
            self.sampling.extend(step)
            self._open_window()
        else:
            self.sampling.extend(step + 1)

    def _script_only(self, frame: FrameType | None) -> bool:
        is_user = self.state.attributor.is_user
        while frame is not None:
            name = frame.f_code.co_filename
            if name.startswith(PROBE_DIR) or name == "<string>":  # the child that runs the script
                return True
            if not is_user(name):
                return False
            frame = frame.f_back
        return True

    def _nothing_above_ours(self) -> bool:
        """No mode the script pushed sits on top of the stacks ours would go on."""
        if _get_current_dispatch_mode() is not None:
            return False
        return self._function_on_top() if self._function_on else not torch._C._len_torch_function_stack()

    def _pause(
        self,
        optimizer: torch.optim.Optimizer | None = None,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> bool:
        """Run a library optimizer's `step()` (or a `zero_grad`) without the modes, watched or not: it is
        most of a small model's torch calls and nothing is checked there (mismatches between gradients and
        parameters are echoes of forward's). The only tensors a step makes that outlive it are the state of
        its first step, tagged with its parameter's device on resuming; `zero_grad` makes none. Inside such a
        step the optimizer sees the real device (Adam then takes its single-tensor path, as on a CPU)."""
        if self._paused is not None or self._function is None:
            return False
        if optimizer is not None and not self._library_step(optimizer, args, kwargs or {}):
            return False
        if self.state.watching:
            if not self._leave_modes(keep_function=False):
                return False  # the script pushed a mode of its own above ours: leave the stack alone
            self._paused = "both"
        elif self._function_on and self._function_on_top():
            self._function.__exit__(None, None, None)  # type: ignore[no-untyped-call]  # unannotated in torch
            self._function_on = False
            self._paused = "function"
        else:
            return False
        return True

    def _library_step(self, optimizer: torch.optim.Optimizer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
        """Whether `optimizer.step(*args[1:], **kwargs)` runs library code only, on tensors it can hold on the
        CPU. Not with a closure (the forward and backward run inside `step()`), a `step` written in the
        user's code, the optimizer's own step hooks (they run inside our pre- and post-step hooks), or
        `capturable=True` (its kernels assert that parameters and state are on an accelerator)."""
        if args[1:] or kwargs or getattr(optimizer, "_optimizer_step_pre_hooks", None):  # args[0]: the optimizer
            return False
        if getattr(optimizer, "_optimizer_step_post_hooks", None):
            return False
        if any(group.get("capturable") for group in optimizer.param_groups):
            return False
        cls = type(optimizer)
        library = self._library_steps.get(cls)
        if library is None:
            code = getattr(inspect.unwrap(cls.step), "__code__", None)
            library = self._library_steps[cls] = code is not None and not self.state.attributor.is_user(
                code.co_filename
            )
        return library

    def _resume(self, optimizer: torch.optim.Optimizer | None = None) -> None:
        paused, self._paused = self._paused, None
        if paused is None:
            return
        if optimizer is not None and self.simulate:
            self._tag_new_state(optimizer)
        if paused == "both":
            self._enter_modes()
        elif self._function is not None:  # None only once `modes()` has ended
            self._function.__enter__()  # type: ignore[no-untyped-call]  # unannotated in torch
            self._function_on = True

    def _tag_new_state(self, optimizer: torch.optim.Optimizer) -> None:
        """The state a step made while paused goes where the optimizer puts it on a GPU: its parameter's
        device, but `step` counts, which stay on the CPU unless `capturable` or `fused` (torch's own rule
        when it loads a state dict)."""
        size = len(optimizer.state)
        if self._state_sizes.get(id(optimizer)) == size:
            return
        self._state_sizes[id(optimizer)] = size
        tags = self.state.tags
        for group in optimizer.param_groups:
            device_steps = bool(group.get("capturable") or group.get("fused"))
            for param in group["params"]:
                state = optimizer.state.get(param)
                device = tags.get(param) if state else "cpu"
                if not state or device == "cpu":
                    continue
                for key, value in state.items():
                    if isinstance(value, torch.Tensor) and value is not param and (key != "step" or device_steps):
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
