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
    cmd = [sys.executable, "-m", "torchlint", "probe", "--output-format", "json", *options, str(script)]
    if args:
        cmd += ["--", *args]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # the probe must set it
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd or SCRIPTS, timeout=300, env=env)
    report = json.loads(proc.stdout) if proc.stdout.strip() else None
    return report, proc


def only(report, kind):
    return [o for o in report["observations"] if o["kind"] == kind]


@pytest.fixture(scope="session")
def reports():
    """Each script probed once per session (the probe starts a fresh interpreter per run)."""
    cache = {}

    def get(name, *options):
        key = (name, options)
        if key not in cache:
            cache[key] = probe(SCRIPTS / name, *options)
        return cache[key]

    return get
