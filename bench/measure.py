"""Running a command and measuring it: wall time, CPU time of the whole tree, peak RSS."""

from __future__ import annotations

import os
import statistics
import subprocess
import time
from dataclasses import dataclass


@dataclass
class Sample:
    wall: float
    cpu: float
    rss_mb: float
    returncode: int


def run_once(cmd: list[str], env: dict | None = None, cwd: str | None = None) -> Sample:
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=cwd)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.stderr:
        proc.stderr.close()
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(cmd[:3])}... exited {proc.returncode}: {err[-2000:]}")
    # wait4 reports the child itself; pool workers are its children and are counted
    # in its usage once reaped, which ProcessPoolExecutor does before exiting.
    return Sample(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, proc.returncode)


def median_of(cmd: list[str], repeat: int, env: dict | None = None, before=None) -> Sample:
    samples = []
    for _ in range(repeat):
        if before is not None:
            before()
        samples.append(run_once(cmd, env))
    return Sample(
        statistics.median(s.wall for s in samples),
        statistics.median(s.cpu for s in samples),
        max(s.rss_mb for s in samples),
        samples[-1].returncode,
    )
