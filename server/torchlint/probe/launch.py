"""Start the child process and guarantee that nothing it started outlives the probe.

The child runs in its own session; at the end (or at the hard limit) the whole
process group is killed, and on Linux the probe makes itself a child subreaper so
that processes which escaped the group (`setsid`, double forks) are reparented to it
and killed too.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

from torchlint.probe import ranks
from torchlint.probe.simulated_gpus import DEFAULT_GPU
from torchlint.probe.sites import BOOT_FILE

_PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_BOOT = (
    "import sys; sys.path.insert(0, sys.argv.pop(1)); "
    "from torchlint.probe import child; sys.path.pop(0); "
    "import os; code = child.main(sys.argv[1:]); sys.stdout.flush(); sys.stderr.flush(); os._exit(code)"
)


@dataclass
class Request:
    script: str
    args: list[str]
    max_steps: int | None
    max_seconds: float | None
    simulate: bool | None
    python: str = sys.executable
    kill_after: float = 30.0
    cwd: str | None = None
    gpu: str = DEFAULT_GPU  # the GPU simulated CUDA pretends to be
    nproc_per_node: int = 1  # above 1: the script runs under torch.distributed.run, one child per rank
    every_step: bool = False  # watch every step in full instead of sampling (see sampling.py)
    source: str | None = None  # the program to run instead of the script's bytes (a notebook's code cells)


@dataclass
class Outcome:
    result: dict | None  # what the child wrote, None when it wrote nothing
    returncode: int | None
    killed: bool  # the hard limit was reached


def _become_subreaper() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def _children(pid: int) -> list[int]:
    found = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1 and int(fields[1]) == pid:
            found.append(int(entry))
    return found


def kill_tree(proc: subprocess.Popen, reaper: bool) -> None:
    """Kill the child's process group, then every process reparented to us, until none is left."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
    if not reaper:
        return
    for _round in range(50):
        orphans = _children(os.getpid())
        if not orphans:
            return
        for pid in orphans:
            for kill in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):  # noqa: B023
                try:
                    kill()
                except (ProcessLookupError, PermissionError):
                    pass
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:
            try:
                reaped, _status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if reaped == 0:
                time.sleep(0.01)


def run(request: Request, stdout=None) -> Outcome:
    reaper = _become_subreaper()
    with tempfile.TemporaryDirectory(prefix="torchlint-probe-") as tmp:
        result_path = os.path.join(tmp, "result.json")
        payload = json.dumps(
            {
                "script": request.script,
                "args": request.args,
                "max_steps": request.max_steps,
                "max_seconds": request.max_seconds,
                "simulate": request.simulate,
                "gpu": request.gpu,
                "per_rank": request.nproc_per_node > 1,
                "every_step": request.every_step,
                "source": request.source,
                "result": result_path,
            }
        )
        command = [request.python, "-c", _BOOT]
        if request.nproc_per_node > 1:  # PyTorch's own launcher runs a file: the boot code becomes one
            boot = os.path.join(tmp, BOOT_FILE)
            with open(boot, "w", encoding="utf-8") as fh:
                fh.write(_BOOT.replace("; ", "\n"))
            command = [
                request.python,
                "-m",
                "torch.distributed.run",
                "--standalone",
                f"--nproc-per-node={request.nproc_per_node}",
                boot,
            ]
        proc = subprocess.Popen(
            [*command, _PACKAGE_PARENT, payload],
            cwd=request.cwd,
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            start_new_session=True,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},  # no __pycache__ in the user's tree
        )
        limit = (request.max_seconds or 0) + request.kill_after if request.max_seconds else None
        killed = False
        try:
            proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            killed = True
        finally:
            kill_tree(proc, reaper)
        if request.nproc_per_node == 1:
            return Outcome(_read(result_path), proc.returncode, killed)
        found = {rank: _read(f"{result_path}.{rank}") for rank in range(request.nproc_per_node)}
        per_rank = {rank: result for rank, result in found.items() if result is not None}
        return Outcome(ranks.merge(per_rank) if per_rank else None, proc.returncode, killed)


def _read(path: str) -> dict | None:
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None
