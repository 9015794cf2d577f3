"""Static checks CI runs with the tests: ruff (lint and format) over the tree, mypy --strict on the
engine, the language server, the runtime probe, the noqa grammar, the config and the rules (see pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
STRICT = [
    "server/torchlint/engine",
    "server/torchlint/lsp",
    "server/torchlint/probe",
    "server/torchlint/noqa.py",
    "server/torchlint/config.py",
    "rules",
]


def _run(*args: str, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def test_mypy_strict(request, tmp_path):
    cache = request.config.cache.mkdir("mypy") if getattr(request.config, "cache", None) else tmp_path
    r = _run("mypy", "--strict", "--cache-dir", str(cache), *STRICT)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("command", [("check",), ("format", "--check")], ids=["lint", "format"])
def test_ruff(command):
    r = _run("ruff", *command, ".", timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
