"""The GPUs simulated CUDA can pretend to be (torch-free: the command line offers the names)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Gpu:
    name: str
    total_memory: int
    major: int
    minor: int
    multi_processor_count: int
    L2_cache_size: int


GPUS = {
    "h100": Gpu("NVIDIA H100 80GB HBM3", 80 * 2**30, 9, 0, 132, 50 * 2**20),
    "a100": Gpu("NVIDIA A100-SXM4-80GB", 80 * 2**30, 8, 0, 108, 40 * 2**20),
    "l4": Gpu("NVIDIA L4", 24 * 2**30, 8, 9, 58, 48 * 2**20),
    "t4": Gpu("Tesla T4", 16 * 2**30, 7, 5, 40, 4 * 2**20),
}
DEFAULT_GPU = "h100"
