"""What a crash shows: the observation kind an exception's message stands for.

On a real GPU a device mismatch raises instead of being observed, and in simulation a
`.view` on a non-contiguous tensor raises too; the crash then confirms the same static
findings the observation would. Plain text matching: PyTorch's messages are stable.
"""

from __future__ import annotations

# (text in the exception message, the observation kind it shows)
_SIGNATURES = (
    ("Expected all tensors to be on the same device", "device-mismatch"),
    ("should be the same or input should be a MKLDNN tensor", "device-mismatch"),  # conv input vs weight
    ("Expected object of device type", "device-mismatch"),
    ("view size is not compatible with input tensor's size and stride", "non-contiguous-view"),
    ("Default process group has not been initialized", "process-group-missing"),
    ("device_ids and output_device arguments only work with", "ddp-before-device-move"),
)


def shows(message: str) -> str | None:
    for text, kind in _SIGNATURES:
        if text in message:
            return kind
    return None


# What PyTorch says when code reaches CUDA that simulation does not stand in for: on a GPU machine
# these calls work, so the crash is the simulation's, never the script's.
_SIMULATION_GAPS = (
    "Torch not compiled with CUDA enabled",
    "Cannot access accelerator device when none is available",
    "is not linked with support for cuda devices",
    "without ATen_cuda library",
    "Found no NVIDIA driver",
    "No CUDA GPUs are available",
    "from the 'CUDA' backend",
    "has no attribute '_cuda_",
    "CUDA is not available",
    "Tried to instantiate dummy base class",  # torch.cuda classes with no CUDA build behind them
)


def simulation_gap(message: str) -> bool:
    """Whether an exception's message says that a CUDA feature was missing, not that the script erred."""
    return any(text in message for text in _SIMULATION_GAPS)
