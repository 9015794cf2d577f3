"""Emacs 28 + Eglot (Debian: `apt-get install -y emacs-nox elpa-eglot`) as a second,
independent client of the installed `torchlint server`, in --batch mode.

Skips when Emacs or Eglot is not installed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EMACS = shutil.which("emacs")
TORCHLINT = shutil.which("torchlint", path=str(Path(sys.executable).parent)) or "torchlint"
SCRIPT = Path(__file__).with_name("eglot_quickfix.el")

BUGGY = """\
import torch
model = torch.nn.Linear(4, 2)
optimizer = torch.optim.Adam(model.parameters())
for x, y in loader:  # 中文注释
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
"""


def _eglot_missing() -> bool:
    if EMACS is None:
        return True
    probe = subprocess.run([EMACS, "--batch", "--eval", "(require 'eglot)"], capture_output=True, timeout=60)
    return probe.returncode != 0


@pytest.mark.skipif(
    _eglot_missing(), reason="emacs with eglot is not installed (apt-get install -y emacs-nox elpa-eglot)"
)
def test_eglot_receives_diagnostics_and_applies_a_quick_fix(tmp_path):
    fixture = tmp_path / "train.py"
    fixture.write_text(BUGGY, encoding="utf-8")
    out = tmp_path / "result.json"
    env = {
        **os.environ,
        "TORCHLINT_CMD": json.dumps([TORCHLINT, "server"]),
        "FIXTURE": str(fixture),
        "OUT": str(out),
        "HOME": str(tmp_path),
    }
    proc = subprocess.run(
        [EMACS, "--batch", "-l", str(SCRIPT)], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert out.exists(), f"emacs wrote no result (exit {proc.returncode}): {proc.stderr[-2000:]}"
    result = json.loads(out.read_text())
    assert "error" not in result, result
    assert result["steps"] == ["diagnostics", "applied", "cleared"]
    assert result["initial"] == [{"code": "TL101", "line": 4, "source": "torchlint"}]
    assert "Disable TL101 for this line" in result["titles"]
    assert result["text"] == BUGGY.replace("# 中文注释\n", "# 中文注释\n    optimizer.zero_grad()\n")
