"""Start the child process and guarantee that nothing it started outlives the probe.

The child runs in its own session; at the end (or at the hard limit) the whole
process group is killed, and on Linux the probe makes itself a child subreaper so
that processes which escaped the group (`setsid`, double forks) are reparented to it
and killed too.

The hard limit (`--max-seconds` + `--kill-after`) counts, like `--max-seconds` itself,
from the moment the script starts: the child writes its first report then. The
interpreter's own start and `import torch` are not the script's time: on a loaded
machine they took longer than `--kill-after`, and the child was killed before its
script had run at all, leaving no report. They have `STARTUP_SECONDS` of their own.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO

from torchlint.probe import ranks
from torchlint.probe.json_types import ChildRequest, ChildResult
from torchlint.probe.simulated_gpus import DEFAULT_GPU
from torchlint.probe.sites import BOOT_FILE

STARTUP_SECONDS = 120.0  # for the interpreter to start and import torch, before the script's clock starts
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
    result: ChildResult | None  # what the child wrote, None when it wrote nothing
    returncode: int | None
    killed: bool  # the hard limit was reached (before the script started, when `result` is None)


def _become_subreaper() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        status: int = libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
        return status == 0
    except (OSError, AttributeError):
        return False


def _children(pid: int) -> list[int]:
    found: list[int] = []
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


def kill_tree(proc: subprocess.Popen[bytes], reaper: bool) -> None:
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
            for kill in (os.killpg, os.kill):
                try:
                    kill(pid, signal.SIGKILL)
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


def run(request: Request, stdout: int | IO[bytes] | None = None) -> Outcome:
    reaper = _become_subreaper()
    with tempfile.TemporaryDirectory(prefix="torchlint-probe-") as tmp:
        result_path = os.path.join(tmp, "result.json")
        child_request: ChildRequest = {
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
        payload = json.dumps(child_request)
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
        try:
            killed = not _wait(proc, request, lambda: any(name.startswith("result.json") for name in os.listdir(tmp)))
        finally:
            kill_tree(proc, reaper)
        if request.nproc_per_node == 1:
            return Outcome(_read(result_path), proc.returncode, killed)
        found = {rank: _read(f"{result_path}.{rank}") for rank in range(request.nproc_per_node)}
        per_rank = {rank: result for rank, result in found.items() if result is not None}
        return Outcome(ranks.merge(per_rank) if per_rank else None, proc.returncode, killed)


def _wait(proc: subprocess.Popen[bytes], request: Request, started: Callable[[], bool]) -> bool:
    """Wait for the child to end (True) or for the hard limit (False): `STARTUP_SECONDS` until
    `started()` (a rank wrote its first report), then `--max-seconds` + `--kill-after` from then."""
    if not request.max_seconds:
        proc.wait()
        return True
    limit = request.max_seconds + request.kill_after
    deadline = time.monotonic() + STARTUP_SECONDS + limit
    begun = False
    while True:
        try:
            proc.wait(timeout=0.1)
            return True
        except subprocess.TimeoutExpired:
            pass
        now = time.monotonic()
        if not begun and started():
            begun, deadline = True, now + limit
        if now >= deadline:
            return False


def _read(path: str) -> ChildResult | None:
    try:
        with open(path, encoding="utf-8") as fh:
            result: ChildResult = json.load(fh)  # the child's own writing (child.py): not checked again
            return result
    except (OSError, ValueError):
        return None
