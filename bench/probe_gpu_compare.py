"""Simulated CUDA against a real GPU (issue 29, item 8): one call, on a machine with a GPU.

Runs the survival set (bench/probe_survival.py) under the probe twice per script, with simulated CUDA
and with `--no-simulate-cuda` on the real GPU, and compares what the two runs saw: steps, how each
ended, and the observations by (kind, file, line). A difference is either a simulation gap (seen only
on the GPU: something simulation misses; only simulated: a false observation) or a GPU-only behaviour
to explain (a real mismatch raises on a GPU: `crash` with `shows: device-mismatch` there, an
observation in simulation). Prints a Markdown table; exits 1 when any script differs.

    python bench/probe_survival.py --export .survival-src   # where the repositories can be fetched
    python bench/probe_gpu_compare.py --mirror .survival-src [--pythonpath DEPS] [--json OUT] [--jobs N]

The GPU machine cannot fetch: `--export` writes the scripts' folders (the public code, not committed)
into an ignored folder to carry along.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench import probe_survival  # run as a script from anywhere: the repository root on the path first

# A device mismatch raises on a GPU and is observed in simulation: the same finding, told two ways.
_SAME_PROBLEM = {("crash", "device-mismatch"): "device-mismatch"}


def seen(run: dict) -> set[tuple[str, str, int]]:
    """A run's observations as (kind, file, line); a GPU crash that shows a kind counts as that kind."""
    out = set()
    for o in run.get("observations") or []:
        kind = _SAME_PROBLEM.get((o["kind"], o.get("shows")), o["kind"])
        out.add((kind, o["path"], o["line"]))
    return out


def compare(simulated: dict, gpu: dict, same_steps: bool = True) -> dict:
    """What differs between a script's simulated run and its GPU run (`same_steps`: false for a script that
    stops at a random point, whose step counts are not compared)."""
    sim, real = seen(simulated), seen(gpu)
    return {
        "steps": (simulated.get("steps"), gpu.get("steps")),
        "same_steps": same_steps,
        "ended": (_ending(simulated), _ending(gpu)),
        "only_simulated": sorted(sim - real),
        "only_gpu": sorted(real - sim),
        "both": sorted(sim & real),
    }


def _ending(run: dict) -> str:
    if run.get("error"):
        return f"error: {run['error'][:80]}"
    return str(run.get("stopped_by"))


def differs(diff: dict) -> bool:
    return (
        (diff["same_steps"] and diff["steps"][0] != diff["steps"][1])
        or diff["ended"][0] != diff["ended"][1]
        or bool(diff["only_simulated"] or diff["only_gpu"])
    )


def table(rows: list[tuple[str, dict]]) -> str:
    def kinds(items) -> str:
        return "; ".join(f"{k} {p}:{n}" for k, p, n in items) or "-"

    out = [
        "| script | steps simulated / GPU | ended simulated / GPU | same observations | only simulated | only GPU |",
        "|---|---|---|---|---|---|",
    ]
    for name, d in rows:
        out.append(
            f"| {name} | {d['steps'][0]} / {d['steps'][1]} | {d['ended'][0]} / {d['ended'][1]} | "
            f"{len(d['both'])} | {kinds(d['only_simulated'])} | {kinds(d['only_gpu'])} |"
        )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mirror", type=Path, default=Path("/work/.mirror"))
    p.add_argument("--pythonpath", default=None)
    p.add_argument("--only", nargs="*", default=None)
    p.add_argument("--jobs", type=int, default=1, help="scripts run at once")
    p.add_argument("--json", type=Path, default=Path("probe-gpu-compare.json"))
    args = p.parse_args(argv)
    survival = ["--mirror", str(args.mirror), "--gpu", "--json", str(args.json), "--jobs", str(args.jobs)]
    survival += [
        *(["--pythonpath", args.pythonpath] if args.pythonpath else []),
        *(["--only", *args.only] if args.only else []),
    ]
    probe_survival.main(survival)  # its own table (plain against simulated) first
    rows = [(r["name"], compare(r["probe"], r["gpu"], r["same_steps"])) for r in json.loads(args.json.read_text())]
    print()
    print(table(rows))
    return 1 if any(differs(d) for _name, d in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
