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
