"""Running a training script plainly and under `torchlint probe`, and judging its survival (issue 29, item 2).

Shared by the two survival sets: bench/probe_survival.py (scripts from mirrors of their repositories, run
by hand) and bench/survival_pypi.py (examples shipped in pinned PyPI sdists, run by the test suite). A set
says where a script's folder comes from (`prepare`); running, counting steps and judging are the same.

A script runs twice in fresh copies of its folder:

- plainly (`python SCRIPT ARGS`), counting its optimizer steps (or backward calls, in a loop with no
  optimizer) with a global optimizer hook and nothing else: on a CPU-only machine it takes its CPU path;
- under `torchlint probe --max-steps 100000` with simulated CUDA, where it takes its GPU path.

It survives when the probe run ends as the plain one does (same exit status, no exception, not stopped by
a limit) after the same number of steps. A script that needs a GPU to run at all cannot run plainly on a
CPU: its expected step count (`expect`) is derived from its data and arguments instead. A notebook
(`.ipynb`) runs as the program the probe runs: its code cells in order, IPython lines skipped.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Script:
    name: str
    repo: tuple[str, str]  # (owner/name, commit) of a repository, or (PyPI project, version) of an sdist
    directory: str  # the folder copied (the script's imports and data live there)
    path: str  # the script, relative to `directory`
    args: list[str]  # under the probe: the GPU path where the script has a switch for it
    data: str  # the recipe: a function of the set's module, called in the copy's folder
    plain_args: list[str] | None = None  # plainly, when the GPU path's arguments would fail on a CPU
    before: list[list[str]] = field(default_factory=list)  # scripts run first (plainly) in the same copy
    expect: int | None = None  # steps, for a script that cannot run without a GPU
    probe_options: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)  # both runs
    same_steps: bool = True  # False: the script stops at a random point (no seed), only its end is compared
    note: str = ""


# Run plainly: the script as `python SCRIPT`, with a global optimizer hook counting steps (and backward
# calls, for a loop without an optimizer), written to $SURVIVAL_COUNT at exit.
COUNTER = """
import atexit, json, os, runpy, sys
import torch
from torch.optim.optimizer import register_optimizer_step_post_hook
counts = {"steps": 0, "backward": 0}
register_optimizer_step_post_hook(lambda *a: counts.__setitem__("steps", counts["steps"] + 1))
_backward = torch.autograd.backward
def backward(*a, **k):
    counts["backward"] += 1
    return _backward(*a, **k)
torch.autograd.backward = backward
pid = os.getpid()
@atexit.register
def _save():
    if os.getpid() == pid:
        with open(os.environ["SURVIVAL_COUNT"], "w") as fh:
            json.dump(counts, fh)
script = sys.argv[1]
sys.argv = sys.argv[1:]
sys.path[0] = os.path.dirname(os.path.abspath(script))
if script.endswith(".ipynb"):
    from torchlint.probe.notebooks import program_of
    code = compile(program_of(script).text, script, "exec")
    exec(code, {"__name__": "__main__", "__file__": script, "__builtins__": __builtins__})
else:
    runpy.run_path(script, run_name="__main__")
"""


def run_plain(folder: Path, script: Script, python: str, timeout: float) -> dict:
    for before in script.before:
        subprocess.run([python, *before], cwd=folder, capture_output=True, timeout=timeout, check=True)
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as fh:
        count_path = fh.name
    started = time.monotonic()
    proc = subprocess.run(
        [python, "-c", COUNTER, script.path, *(script.plain_args or script.args)],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **script.env, "SURVIVAL_COUNT": count_path},
    )
    seconds = time.monotonic() - started
    try:
        with open(count_path) as fh:
            counts = json.load(fh)
    except (OSError, ValueError):
        counts = {"steps": None, "backward": None}
    os.unlink(count_path)
    return {
        "status": proc.returncode,
        "steps": counts["steps"] or counts["backward"],
        "seconds": round(seconds, 1),
        "error": proc.stderr.strip().splitlines()[-1] if proc.returncode and proc.stderr.strip() else "",
    }


def run_probe(folder: Path, script: Script, python: str, timeout: float, simulate: bool = True) -> dict:
    for before in script.before:
        subprocess.run([python, *before], cwd=folder, capture_output=True, timeout=timeout, check=True)
    cmd = [python, "-m", "torchlint", "probe", "--output-format", "json", "--max-steps", "100000"]
    cmd += ["--max-seconds", str(timeout), "--simulate-cuda" if simulate else "--no-simulate-cuda"]
    cmd += [*script.probe_options, script.path, "--", *script.args]
    started = time.monotonic()
    proc = subprocess.run(
        cmd, cwd=folder, capture_output=True, text=True, timeout=timeout + 120, env={**os.environ, **script.env}
    )
    seconds = time.monotonic() - started
    report = json.loads(proc.stdout) if proc.stdout.strip() else None
    if report is None:
        return {"status": proc.returncode, "steps": None, "seconds": round(seconds, 1), "error": proc.stderr[-300:]}
    exc = report["exception"]
    return {
        "status": proc.returncode,
        "exit_status": report["exit_status"],
        "steps": report["steps"],
        "stopped_by": report["stopped_by"],
        "seconds": round(seconds, 1),
        "devices_used": report["devices_used"],
        "observations": [
            {
                "kind": o["kind"],
                "path": os.path.relpath(o["path"], folder),
                "line": o["line"],
                "message": o["message"],
                "shows": o["facts"].get("shows"),  # a crash that is a known problem (a GPU's device mismatch)
            }
            for o in report["observations"]
        ],
        "error": f"{exc['type']}: {exc['message']} ({exc.get('unsupported') or exc.get('path')})" if exc else "",
    }


def survives(plain: dict | None, probe: dict, script: Script) -> bool:
    """The probe run ended as the plain one did: no exception, not stopped by a limit, the same exit
    status and the same steps (`expect` where the script cannot run plainly)."""
    if probe.get("error") or probe.get("stopped_by") != "end":
        return False
    steps = script.expect if plain is None else plain["steps"]
    status = 0 if plain is None else plain["status"]
    return (probe["steps"] == steps or not script.same_steps) and probe.get("exit_status", probe["status"]) == status


def table(rows: list[dict]) -> str:
    out = [
        "| script | source | steps plain | steps probe | seconds plain / probe | devices | outcome |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        plain = r["plain"]
        probe = r["probe"]
        steps_plain = f"needs a GPU; expected {r['expect']}" if plain is None else plain["steps"]
        if not r["same_steps"]:
            steps_plain = f"{steps_plain} (unseeded: varies)"
        if plain is not None and plain["status"]:
            steps_plain = f"{plain['steps']} (exit {plain['status']}: {plain['error'][:60]})"
        secs = f"{'-' if plain is None else plain['seconds']} / {probe['seconds']}"
        outcome = "survives" if r["survives"] else f"FAILS: {probe.get('error') or probe.get('stopped_by')}"
        if r["survives"] and probe.get("observations"):
            outcome += f"; {len(probe['observations'])} observation(s)"
        devices = ", ".join(probe.get("devices_used") or []) or "-"
        out.append(
            f"| {r['name']} | {r['source']} | {steps_plain} | {probe['steps']} | {secs} | {devices} | {outcome} |"
        )
    return "\n".join(out)


def run_script(
    script: Script,
    prepare: Callable[[Script, Path], Path],
    source: str,
    work: Path,
    python: str,
    timeout: float,
    gpu: bool = False,
) -> dict:
    """One script's runs as a row: plainly, under the probe simulated, and on the real GPU with `gpu`.
    `prepare(script, into)` lays the script's folder with its data under `into` and returns it; `source`
    names where the script comes from in the table."""
    base = work / script.name
    shutil.rmtree(base, ignore_errors=True)
    runs = {}
    for kind in ("plain", "probe", *(["gpu"] if gpu else [])):
        (base / kind).mkdir(parents=True)
        folder = prepare(script, base / kind)
        if kind == "plain":
            runs[kind] = None if script.expect is not None else run_plain(folder, script, python, timeout)
        else:
            runs[kind] = run_probe(folder, script, python, timeout, simulate=kind == "probe")
    row = {
        "name": script.name,
        "source": source,
        "args": script.args,
        "expect": script.expect,
        **runs,
        "same_steps": script.same_steps,
        "survives": survives(runs["plain"], runs["probe"], script),
    }
    print(table([row]).splitlines()[-1], file=sys.stderr, flush=True)
    return row
