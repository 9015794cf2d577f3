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
                "result": result_path,
            }
        )
        proc = subprocess.Popen(
            [request.python, "-c", _BOOT, _PACKAGE_PARENT, payload],
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
        result = None
        try:
            with open(result_path, encoding="utf-8") as fh:
                result = json.load(fh)
        except (OSError, ValueError):
            result = None
        return Outcome(result, proc.returncode, killed)
