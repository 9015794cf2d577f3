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


# The JSON report as docs/probe.md describes it: every test that reads a report validates it.
OBSERVATION = {
    "type": "object",
    "additionalProperties": False,
    "required": ["kind", "path", "line", "message", "count", "first_step", "facts", "stack"],
    "properties": {
        "kind": {
            "enum": [
                "device-mismatch",
                "module-device-split",
                "non-contiguous-view",
                "implicit-copy",
                "memory-format-mismatch",
                "host-sync",
                "grads-not-cleared",
                "grads-zero-at-step",
                "eval-mode-in-training",
                "graph-retained",
                "param-never-updated",
                "crash",
                "ddp-before-device-move",
                "process-group-missing",
                "sampler-epoch-not-set",
            ]
        },
        "path": {"type": "string"},
        "line": {"type": "integer", "minimum": 1},
        # the expression at `line` (Python 3.11+), for editors
        "column": {"type": "integer", "minimum": 1},
        "end_line": {"type": "integer", "minimum": 1},
        "end_column": {"type": "integer", "minimum": 1},
        "message": {"type": "string", "minLength": 1},
        "count": {"type": "integer", "minimum": 1},
        "first_step": {"type": "integer", "minimum": 1},
        "facts": {"type": "object"},
        "ranks": {"type": "array", "items": {"type": "integer", "minimum": 0}},  # --nproc-per-node: who saw it
        "stack": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["path", "line"],
                "properties": {"path": {"type": "string"}, "line": {"type": "integer", "minimum": 1}},
            },
        },
    },
}
REPORT = {
    "type": "object",
    "additionalProperties": False,
    "required": ["script", "steps", "seconds", "stopped_by", "simulated_cuda", "exception", "observations", "findings"],
    "properties": {
        "script": {"type": "string"},
        "steps": {"type": "integer"},
        "step_kind": {"enum": ["optimizer", "backward"]},
        "seconds": {"type": "number"},
        "stopped_by": {"enum": ["end", "max-steps", "max-seconds", "exception"]},
        "simulated_cuda": {"type": "boolean"},
        "devices_used": {"type": "array", "items": {"type": "string"}},
        "ranks": {"type": "array", "items": {"type": "integer", "minimum": 0}},
        "watched_steps": {"type": "integer", "minimum": 0},
        "exit_status": {"type": "integer"},
        "devices_checked": {"type": "boolean"},
        "exception": {
            "oneOf": [
                {"type": "null"},
                {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["type", "message", "path", "line"],
                    "properties": {
                        "type": {"type": "string"},
                        "message": {"type": "string"},
                        "path": {"type": ["string", "null"]},
                        "line": {"type": ["integer", "null"]},
                        "rank": {"type": "integer", "minimum": 0},  # --nproc-per-node: the lowest crashed rank
                        "unsupported": {"type": "string"},  # what simulated CUDA lacked (exit 4)
                    },
                },
            ]
        },
        "observations": {"type": "array", "items": OBSERVATION},
        "findings": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["code", "line", "path", "message", "status"],
                "properties": {"status": {"enum": ["confirmed", "not-observed", "not-reached", "not-applicable"]}},
            },
        },
    },
}


def only(report, kind):
    return [o for o in report["observations"] if o["kind"] == kind]


# Runs that several tests read: started together, in parallel, when the first test asks.
PREFETCH = [
    *(
        (path.name, ())
        for path in sorted(SCRIPTS.glob("*.py"))
        if path.name
        not in {
            "workers_and_fork.py",
            "args_and_cwd.py",
            "forever.py",
            "forever_wrapping.py",
            "ends_early.py",
            "gpu_idioms_clean.py",
        }
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
