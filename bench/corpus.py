"""The default corpus: installed sources of torch and the PyTorch libraries beside it."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

LIBRARIES = (
    "torch",
    "torchvision",
    "torchaudio",
    "timm",
    "transformers",
    "accelerate",
    "lightning",
    "pytorch_lightning",
)
TORCH_SUBSET = ("torch/nn", "torch/optim")  # the corpus the performance issue's facts were measured on


def package_dir(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)  # finds without importing
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def default_roots(full: bool) -> list[Path]:
    if not full:
        torch = package_dir("torch")
        return [torch.parent / sub for sub in TORCH_SUBSET] if torch else []
    return [d for d in (package_dir(n) for n in LIBRARIES) if d is not None]


def python_files(roots: list[Path]) -> list[Path]:
    files = []
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            files.extend(Path(dirpath) / f for f in sorted(filenames) if f.endswith(".py"))
    return files


def line_count(files: list[Path]) -> int:
    return sum(f.read_bytes().count(b"\n") for f in files)
