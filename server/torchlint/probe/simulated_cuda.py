"""A simulated CUDA device on a CPU-only machine: the parts of `torch.cuda` and `torch.accelerator`
that training scripts touch.

Tensors stay on the CPU and are tagged with their logical device (`device_tags`); this
module makes the runtime queries agree: availability, device count and index, properties
and capability of a configurable GPU, memory statistics computed from the tagged
storages, streams and events (events time the CPU work between them), sync debug mode,
`pin_memory`. Every patch is undone at the end.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Literal

import torch

from torchlint.probe import simulated_checkpoints, simulated_devices, simulated_parallel
from torchlint.probe.device_tags import DeviceTags, parse_device, required_device
from torchlint.probe.simulated_devices import check_ordinal
from torchlint.probe.simulated_gpus import DEFAULT_GPU, GPUS, Gpu
from torchlint.probe.simulated_rng import CudaGenerators, Generator

_BLOCK = 2 * 1024 * 1024  # the caching allocator reserves in 2 MiB segments


class _Properties:
    """What `torch.cuda.get_device_properties` returns, for the simulated GPU."""

    def __init__(self, gpu: Gpu, index: int):
        self.name = f"{gpu.name} (simulated by torchlint probe)"
        self.total_memory = gpu.total_memory
        self.major, self.minor = gpu.major, gpu.minor
        self.multi_processor_count = gpu.multi_processor_count
        self.L2_cache_size = gpu.L2_cache_size
        self.is_integrated = False
        self.uuid = f"GPU-00000000-0000-0000-0000-{index:012d}"
        self.is_multi_gpu_board = False
        self.index = index

    def __repr__(self) -> str:
        return (
            f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
            f"total_memory={self.total_memory // 2**20}MB, multi_processor_count={self.multi_processor_count})"
        )


class Stream:
    """A CUDA stream that runs nothing: work happens on the CPU, in order."""

    def __init__(self, device: object = None, priority: int = 0, **_kwargs: object) -> None:
        self.device = torch.device(required_device(device) if device is not None else "cuda:0")
        self.priority = priority

    def synchronize(self) -> None:
        pass

    def query(self) -> bool:
        return True

    def is_capturing(self) -> bool:
        return False

    def wait_stream(self, stream: object) -> None:
        pass

    def wait_event(self, event: object) -> None:
        pass

    def record_event(self, event: Event | None = None) -> Event:
        event = event or Event()
        event.record(self)
        return event

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        return False


class Event:
    """A CUDA event; `elapsed_time` is the CPU time between two records, in milliseconds."""

    def __init__(
        self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False, **_kwargs: object
    ) -> None:
        self.enable_timing = enable_timing
        self.recorded_at: float | None = None

    def record(self, stream: object = None) -> None:
        self.recorded_at = time.perf_counter()

    def elapsed_time(self, end: Event) -> float:
        if not (self.enable_timing and end.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if self.recorded_at is None or end.recorded_at is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return (end.recorded_at - self.recorded_at) * 1000.0

    def synchronize(self) -> None:
        pass

    def query(self) -> bool:
        return True

    def wait(self, stream: object = None) -> None:
        pass


class SimulatedCuda:
    """The simulated runtime: one state shared by the `torch.cuda` and `torch.accelerator` patches."""

    def __init__(self, tags: DeviceTags, gpu: str = DEFAULT_GPU, device_count: int = 1) -> None:
        self.tags = tags
        self.gpu = GPUS[gpu]
        self.device_count = max(1, device_count)
        self.current = 0
        self.peak: dict[str, int] = {}
        self.sync_debug_mode: int | str = 0
        self.streams = [Stream(f"cuda:{i}") for i in range(self.device_count)]
        self.rng = CudaGenerators(self.device_count, lambda: self.current)

    # -- memory ---------------------------------------------------------------------------------
    def _device(self, device: object = None) -> str:
        """A device argument as "cuda:N"; no index means the current device."""
        if device is None or device == "cuda" or (isinstance(device, torch.device) and device.index is None):
            return f"cuda:{self.current}"
        return parse_device(device) or f"cuda:{self.current}"

    def allocated(self, device: object = None) -> int:
        name = self._device(device)
        now = self.tags.bytes_on(name)
        self.peak[name] = max(self.peak.get(name, 0), now)
        return now

    def max_allocated(self, device: object = None) -> int:
        self.allocated(device)
        return self.peak[self._device(device)]

    def reserved(self, device: object = None) -> int:
        return math.ceil(self.max_allocated(device) / _BLOCK) * _BLOCK

    def reset_peak(self, device: object = None) -> None:
        self.peak.pop(self._device(device), None)

    def mem_get_info(self, device: object = None) -> tuple[int, int]:
        return (self.gpu.total_memory - self.reserved(device), self.gpu.total_memory)

    def stats(self, device: object = None) -> OrderedDict[str, int]:
        now, peak, reserved = self.allocated(device), self.max_allocated(device), self.reserved(device)
        stats: OrderedDict[str, int] = OrderedDict()
        for metric, current, top in (
            ("allocated_bytes", now, peak),
            ("active_bytes", now, peak),
            ("requested_bytes", now, peak),
            ("reserved_bytes", reserved, reserved),
        ):
            for pool in ("all", "large_pool", "small_pool"):
                share = 1 if pool != "small_pool" else 0
                stats[f"{metric}.{pool}.current"] = current * share
                stats[f"{metric}.{pool}.peak"] = top * share
                stats[f"{metric}.{pool}.allocated"] = top * share
                stats[f"{metric}.{pool}.freed"] = (top - current) * share
        for counter in ("num_alloc_retries", "num_ooms", "num_sync_all_streams", "num_device_alloc", "num_device_free"):
            stats[counter] = 0
        return stats

    def summary(self, device: object = None, abbreviated: bool = False) -> str:
        name = self._device(device)
        mib = 2**20
        rows = [
            ("Allocated memory", self.allocated(device), self.max_allocated(device)),
            ("Reserved memory", self.reserved(device), self.reserved(device)),
        ]
        lines = [f"|  simulated CUDA memory summary, device {name} ({self.gpu.name})", "|  current / peak"]
        lines += [f"|  {label:<18} {now / mib:10.1f} MiB / {top / mib:10.1f} MiB" for label, now, top in rows]
        return "\n".join(lines) + "\n"

    # -- installation ---------------------------------------------------------------------------
    def install(self) -> list[Callable[[], None]]:
        """Patch torch; returns the undo closures."""
        undo: list[Callable[[], None]] = []

        def patch(owner: object, name: str, value: object) -> None:
            had, old = name in vars(owner), vars(owner).get(name)
            setattr(owner, name, value)
            undo.append(lambda: setattr(owner, name, old) if had else delattr(owner, name))

        set_device = self.set_device
        on_device = type("device", (_DeviceContext,), {"cuda": self, "__module__": "torch.cuda"})
        on_tensors_device = type("device_of", (_OfTensor, on_device), {"__module__": "torch.cuda"})

        def stream_of(device: object = None) -> Stream:
            return self.streams[int(self._device(device).split(":")[1]) % self.device_count]

        cuda = torch.cuda
        runtime: dict[str, object] = {
            "is_available": lambda: True,
            "is_initialized": lambda: True,
            "device_count": lambda: self.device_count,
            "current_device": lambda: self.current,
            "set_device": set_device,
            "device": on_device,
            "device_of": on_tensors_device,
            "init": lambda: None,
            "ipc_collect": lambda: None,
            "get_arch_list": lambda: [f"sm_{self.gpu.major}{self.gpu.minor}"],
            "can_device_access_peer": lambda device, peer: device != peer,
            "set_per_process_memory_fraction": lambda fraction, device=None: None,
            "is_current_stream_capturing": lambda: False,
            "is_tf32_supported": lambda: self.gpu.major >= 8,
            "get_allocator_backend": lambda: "native",
            "synchronize": lambda device=None: None,
            "get_device_name": lambda device=None: _Properties(self.gpu, 0).name,
            "get_device_properties": lambda device=None: _Properties(self.gpu, self.current),
            "get_device_capability": lambda device=None: (self.gpu.major, self.gpu.minor),
            "is_bf16_supported": lambda including_emulation=True: self.gpu.major >= 8,
            "Stream": Stream,
            "Event": Event,
            "stream": lambda stream=None: contextlib.nullcontext(stream),
            "current_stream": stream_of,
            "default_stream": stream_of,
            "set_stream": lambda stream: None,
            "set_sync_debug_mode": lambda mode: setattr(self, "sync_debug_mode", _debug_level(mode)),
            "get_sync_debug_mode": lambda: self.sync_debug_mode,
        }
        memory: dict[str, object] = {
            "memory_allocated": self.allocated,
            "max_memory_allocated": self.max_allocated,
            "memory_reserved": self.reserved,
            "max_memory_reserved": self.reserved,
            "memory_cached": self.reserved,
            "max_memory_cached": self.reserved,
            "memory_stats": self.stats,
            "memory_summary": self.summary,
            "mem_get_info": self.mem_get_info,
            "reset_peak_memory_stats": self.reset_peak,
            "reset_max_memory_allocated": self.reset_peak,
            "reset_accumulated_memory_stats": lambda device=None: None,
            "empty_cache": lambda: None,
        }
        rng = self.rng.api()
        for name, value in {**runtime, **memory, **rng, **legacy_types(self)}.items():
            patch(cuda, name, value)
        for name, value in rng.items():
            patch(cuda.random, name, value)
        patch(cuda.memory, "_record_memory_history", lambda *args, **kwargs: None)
        # Profiler ranges mark nothing here (push and pop answer the nesting depth, as NVTX does).
        ranges: list[str] = []

        def range_push(msg: str) -> int:
            ranges.append(msg)
            return len(ranges) - 1

        def range_pop() -> int:
            if not ranges:
                return -1
            ranges.pop()
            return len(ranges)

        for name, value in {
            "range_push": range_push,
            "range_pop": range_pop,
            "mark": lambda msg: None,
            "range": lambda msg, *args, **kwargs: contextlib.nullcontext(),
        }.items():
            patch(cuda.nvtx, name, value)
        # cuDNN is there, as on any CUDA build, but no tensor is one it takes: PyTorch's own kernels run.
        cudnn = torch.backends.cudnn
        patch(cudnn, "is_available", lambda: True)
        patch(cudnn, "version", lambda: 90100)
        patch(cudnn, "is_acceptable", lambda tensor: False)
        for name, value in memory.items():
            if hasattr(cuda.memory, name):
                patch(cuda.memory, name, value)
        accelerator = torch.accelerator
        accelerated: dict[str, object] = {
            "is_available": lambda: True,
            "current_accelerator": lambda check_available=False: torch.device("cuda"),
            "device_count": lambda: self.device_count,
            "current_device_index": lambda: self.current,
            "current_device_idx": lambda: self.current,
            "set_device_index": set_device,
            "set_device_idx": set_device,
            "device_index": on_device,
            "synchronize": lambda device=None: None,
            "current_stream": stream_of,
            "set_stream": lambda stream: None,
            "memory_allocated": self.allocated,
            "max_memory_allocated": self.max_allocated,
            "memory_reserved": self.reserved,
            "max_memory_reserved": self.reserved,
            "memory_stats": self.stats,
            "reset_peak_memory_stats": self.reset_peak,
            "get_memory_info": self.mem_get_info,
            "empty_cache": lambda: None,
        }
        for name, value in accelerated.items():
            patch(accelerator, name, value)
        # NCCL needs GPUs: ranks talk over gloo, on the CPU, where the tensors really are.
        import torch.distributed as dist

        init_process_group = dist.init_process_group

        def gloo_process_group(backend: str | None = None, *args: Any, **kwargs: Any) -> None:
            if backend is None or "nccl" in str(backend):
                backend = "gloo"
            init_process_group(backend, *args, **kwargs)

        patch(dist, "init_process_group", gloo_process_group)
        # Pinning needs a real accelerator: pinned memory is ordinary memory here.
        from torch.utils.data._utils import pin_memory as pin

        patch(pin, "pin_memory", lambda data, device=None: data)
        patch(torch.Tensor, "pin_memory", lambda tensor, device=None: tensor)
        # Device-generic streams and events; a tensor's use on a stream needs no bookkeeping here.
        patch(torch, "Stream", Stream)
        patch(torch, "Event", Event)
        patch(torch.Tensor, "record_stream", lambda tensor, stream: None)
        patch(torch, "Generator", Generator)
        autocast = torch.amp.autocast_mode.autocast
        patch(autocast, "__init__", _autocast_on_cpu(autocast.__init__))
        undo += simulated_devices.install(self.device_count)
        undo += simulated_checkpoints.install(self.tags, self.device_count)
        undo += simulated_parallel.install()
        return undo

    def set_device(self, device: object) -> None:
        name = self._device(device)
        check_ordinal(name, self.device_count)
        self.current = int(name.split(":")[1])


class _DeviceContext:
    """`torch.cuda.device(i)` and `torch.accelerator.device_index(i)`: the current device inside a block.
    A class, as in PyTorch (code refers to it as one); `install` makes one per simulation, with `cuda` set."""

    cuda: SimulatedCuda

    def __init__(self, device: object) -> None:
        self.device = device
        self.before = self.cuda.current

    def __enter__(self) -> _DeviceContext:
        self.before = self.cuda.current
        if self.device is not None and self.device != -1:
            self.cuda.set_device(self.device)
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        self.cuda.current = self.before
        return False


class _OfTensor(_DeviceContext):
    """`torch.cuda.device_of(t)`: the device of a tensor (the CPU's -1 changes nothing)."""

    def __init__(self, obj: object) -> None:
        super().__init__(obj.get_device() if isinstance(obj, torch.Tensor) else obj)


def _autocast_on_cpu(init: Callable[..., None]) -> Callable[..., None]:
    """`autocast("cuda", dtype)` casts the CPU work to that dtype (CUDA's default: float16)."""

    def simulated_init(
        self: torch.autocast, device_type: str, dtype: torch.dtype | None = None, *args: Any, **kwargs: Any
    ) -> None:
        if device_type == "cuda":
            device_type, dtype = "cpu", dtype or torch.float16
        init(self, device_type, dtype, *args, **kwargs)

    return simulated_init


_LEGACY_DTYPES = {
    "FloatTensor": torch.float32,
    "DoubleTensor": torch.float64,
    "HalfTensor": torch.float16,
    "BFloat16Tensor": torch.bfloat16,
    "LongTensor": torch.int64,
    "IntTensor": torch.int32,
    "ShortTensor": torch.int16,
    "CharTensor": torch.int8,
    "ByteTensor": torch.uint8,
    "BoolTensor": torch.bool,
}


class _LegacyType(type):
    """`torch.cuda.FloatTensor`: builds the CPU tensor of that type on the current simulated device, and
    answers `isinstance` by dtype and simulated device."""

    cuda: SimulatedCuda
    dtype: torch.dtype
    cpu_type: type

    def __call__(cls, *args: Any, **kwargs: Any) -> torch.Tensor:
        tensor: torch.Tensor = cls.cpu_type(*args, **kwargs)
        cls.cuda.tags.set(tensor, f"cuda:{cls.cuda.current}")
        return tensor

    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, torch.Tensor) and obj.dtype == cls.dtype and cls.cuda.tags.get(obj).startswith("cuda")


def legacy_types(cuda: SimulatedCuda) -> dict[str, type]:
    return {
        name: _LegacyType(
            name, (), {"cuda": cuda, "dtype": dtype, "cpu_type": getattr(torch, name), "__module__": "torch.cuda"}
        )
        for name, dtype in _LEGACY_DTYPES.items()
    }


def _debug_level(mode: int | str) -> int | str:  # an unknown name is kept as it is
    return {"default": 0, "warn": 1, "error": 2}.get(mode, mode) if isinstance(mode, str) else int(mode)
