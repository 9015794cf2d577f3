"""Neovim's built-in LSP client against the installed `torchlint server`.

CI installs Neovim with `apt-get install -y neovim` (Debian's 0.7.x); the test
skips only when `nvim` is absent.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

NVIM = shutil.which("nvim")
TORCHLINT = shutil.which("torchlint", path=str(Path(sys.executable).parent)) or "torchlint"
SCRIPT = Path(__file__).with_name("nvim_quickfix.lua")

BUGGY = """\
import torch
# 训练循环：中文注释 😀
model = torch.nn.Linear(4, 2)
optimizer = torch.optim.Adam(model.parameters())
for x, y in loader:
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
"""


@pytest.mark.skipif(NVIM is None, reason="nvim is not installed (apt-get install -y neovim)")
def test_neovim_receives_diagnostics_and_applies_a_quick_fix(tmp_path):
    fixture = tmp_path / "train.py"
    fixture.write_text(BUGGY, encoding="utf-8")
    out = tmp_path / "result.json"
    env = {
        **os.environ,
        "TORCHLINT_CMD": json.dumps([TORCHLINT, "server"]),
        "FIXTURE": str(fixture),
        "OUT": str(out),
        "XDG_STATE_HOME": str(tmp_path),
        "XDG_DATA_HOME": str(tmp_path),
        "XDG_CACHE_HOME": str(tmp_path),
    }
    proc = subprocess.run(
        [NVIM, "--headless", "--clean", "-n", "-c", f"luafile {SCRIPT}"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert out.exists(), f"nvim wrote no result (exit {proc.returncode}): {proc.stderr[-2000:]}"
    result = json.loads(out.read_text())
    assert "error" not in result, result
    assert result["steps"] == ["diagnostics", "applied", "cleared"]
    assert [(d["code"], d["lnum"], d["source"]) for d in result["initial"]] == [("TL101", 4, "torchlint")]
    assert "Disable TL101 for this line" in result["titles"]
    assert result["text"] == BUGGY.replace("for x, y in loader:\n", "for x, y in loader:\n    optimizer.zero_grad()\n")
    assert result["after"] == []
