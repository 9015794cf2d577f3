"""extension/scripts/install-code-server.sh names the Debian package of a missing build prerequisite
before it downloads anything (code-server's native modules are built from source)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "extension" / "scripts" / "install-code-server.sh"
BASH = shutil.which("bash")


@pytest.mark.skipif(BASH is None, reason="needs bash")
@pytest.mark.parametrize("missing,package", [("krb5-config", "libkrb5-dev"), ("c++", "build-essential")])
def test_a_missing_prerequisite_is_named_with_its_package(tmp_path, missing, package):
    tools = tmp_path / "bin"
    tools.mkdir()
    for name in ("rg", "krb5-config", "cc", "c++", "make", "python3"):
        if name != missing:
            (tools / name).write_text("#!/bin/sh\n")
            (tools / name).chmod(0o755)
    r = subprocess.run(
        [BASH, str(SCRIPT)],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": str(tools), "HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache")},
    )
    assert r.returncode == 1, r.stderr
    assert f"{missing} is missing (apt-get install {package})" in r.stderr
    assert not (tmp_path / "cache").exists(), "stopped before installing anything"
