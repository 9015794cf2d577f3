import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.fixture
def run_cli():
    """Run the installed `torchlint` console script; returns CompletedProcess."""
    exe = shutil.which("torchlint", path=str(Path(sys.executable).parent)) or "torchlint"

    def run(*args, cwd=None, input=None):
        return subprocess.run([exe, *map(str, args)], capture_output=True, text=True, cwd=cwd, input=input, timeout=300)

    return run


# The suite's throwaway projects target torch 2.1 unless they declare otherwise: a bare torch.load (TL601)
# is then a finding, as many tests use it as their subject. Subprocesses (the CLI, the server) inherit it.
os.environ.setdefault("TORCHLINT_TORCH_VERSION", "2.1")
