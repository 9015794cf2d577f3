"""Helpers for the probe tests: run the CLI on a script and read its JSON report."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parent / "scripts"


def probe(script, *options, cwd=None, args=()):
    """Run `torchlint probe --output-format json` on a script; returns (report or None, CompletedProcess)."""
    if "--max-seconds" not in options:  # a loaded machine must not turn a test into a time limit
        options = ("--max-seconds", "240", *options)
    cmd = [sys.executable, "-m", "torchlint", "probe", "--output-format", "json", *options, str(script)]
    if args:
        cmd += ["--", *args]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # the probe must set it
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd or SCRIPTS, timeout=300, env=env)
    report = json.loads(proc.stdout) if proc.stdout.strip() else None
    return report, proc


def only(report, kind):
    return [o for o in report["observations"] if o["kind"] == kind]


# Runs that several tests read: started together, in parallel, when the first test asks.
PREFETCH = [
    *(
        (path.name, ())
        for path in sorted(SCRIPTS.glob("*.py"))
        if path.name
        not in {"workers_and_fork.py", "args_and_cwd.py", "forever.py", "ends_early.py", "gpu_idioms_clean.py"}
        and not path.name.startswith("sampled_")
    ),
    ("forever.py", ("--max-seconds", "3")),
    ("missing_zero_grad.py", ("--max-steps", "1")),
    ("missing_zero_grad.py", ("--max-steps", "2")),
    ("device_input_not_moved.py", ("--no-simulate-cuda",)),
]


@pytest.fixture(scope="session")
def reports():
    """Each script probed once per session (the probe starts a fresh interpreter per run)."""
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(max_workers=os.cpu_count() or 2)
    cache = {(name, options): pool.submit(probe, SCRIPTS / name, *options) for name, options in PREFETCH}

    def get(name, *options):
        key = (name, options)
        if key not in cache:
            cache[key] = pool.submit(probe, SCRIPTS / name, *options)
        return cache[key].result()

    yield get
    pool.shutdown(wait=True)
