"""The language server, its noqa grammar and its config type-check under `mypy --strict` (see pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STRICT = ["server/torchlint/lsp", "server/torchlint/noqa.py", "server/torchlint/config.py"]


def test_mypy_strict_on_the_language_server(request, tmp_path):
    cache = request.config.cache.mkdir("mypy") if getattr(request.config, "cache", None) else tmp_path
    r = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(cache), *STRICT],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stdout + r.stderr
