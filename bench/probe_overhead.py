"""Probe overhead: training scripts timed plain and under `torchlint probe`, in the same run.

Two workloads: a small Adam-trained MLP and a recurrent language model
(`bench/probe_rnn_lm.py`). Each configuration runs the script in a fresh interpreter;
the script times its own training loop (after warm-up) so that interpreter start and
`import torch` are not counted. Prints a table; asserts nothing about time.

    python bench/probe_overhead.py [--steps 20 200] [--repeat R] [--write]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

MLP = """
import json, sys, time
import torch
from torch import nn

steps = int(sys.argv[1]); out = sys.argv[2]
device = "cuda" if torch.cuda.is_available() else "cpu"
model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10)).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.CrossEntropyLoss()
x = torch.randn(32, 64).to(device); y = torch.randint(0, 10, (32,)).to(device)
for i in range(steps + 5):
    if i == 5:
        start = time.perf_counter()
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
with open(out, "w") as fh:
    json.dump({"ms_per_step": (time.perf_counter() - start) * 1000 / steps}, fh)
"""


RNN_LM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "probe_rnn_lm.py")


def run(cmd: list[str], out: str) -> float:
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=_ENV)
    if done.returncode not in (0, 1):  # the probe exits 1 when it observed something: still a timed run
        raise SystemExit(f"{' '.join(cmd)} exited {done.returncode}:\n{done.stderr[-2000:]}")
    with open(out) as fh:
        return json.load(fh)["ms_per_step"]


# One intra-op thread in every configuration: on a shared machine with few cores, OpenMP workers that
# spin-wait for a busy core made a 1 ms step take 5 to 100 ms at random.
_ENV = {**os.environ, "OMP_NUM_THREADS": "1"}
STEPS = (20, 200)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, nargs="*", default=list(STEPS))
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--write", action="store_true", help="replace the runtime probe section of bench/RESULTS.md")
    args = p.parse_args()
    rows = measure_all(sys.executable, args.steps, args.repeat)
    md = markdown(rows, args.repeat)
    print("\n".join(md))
    if args.write:
        write_section(os.path.join(os.path.dirname(os.path.abspath(__file__)), "RESULTS.md"), md)


def measure_all(python: str, steps: list[int], repeat: int) -> list[tuple]:
    """(workload, steps, configuration, median ms per step, min, max, ratio of medians to plain)."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        mlp = os.path.join(tmp, "train.py")
        with open(mlp, "w") as fh:
            fh.write(MLP)
        for workload, script in (("MLP", mlp), ("RNN LM", RNN_LM)):
            for n in steps:
                rows += measure(python, workload, script, os.path.join(tmp, "out.json"), n, repeat)
    return rows


def markdown(rows: list[tuple], repeat: int) -> list[str]:
    """The RESULTS.md section: the table and the <= 1.5x target per workload, step count and configuration."""
    md = [
        "## Runtime probe",
        "",
        "`bench/probe_overhead.py --write`: each workload's training loop timed by the script itself over N steps "
        "after 5 warm-up steps, plain and under `torchlint probe` (default sampling: the first 3 to 8 steps watched "
        "in full, while they show something, then 2 in every 50, and a step in which a line of the script runs for "
        "the first time: the loop's `start = time.perf_counter()`, at step 6), in fresh interpreters with one "
        "intra-op thread; the three configurations take "
        f"turns, {repeat} rounds; median, with the range of the rounds.",
        "",
        "| workload | steps | configuration | ms / step (median) | range | ratio to plain (medians) | target ≤ 1.5× |",
        "|---|---|---|---|---|---|---|",
    ]
    for workload, steps, name, ms, lo, hi, ratio in rows:
        target = "—" if name == "plain" else ("yes" if ratio <= 1.5 else "no")
        md.append(f"| {workload} | {steps} | {name} | {ms:.3f} | {lo:.3f}–{hi:.3f} | {ratio:.2f}× | {target} |")
    return md


def write_section(path: str, md: list[str]) -> None:
    """Replace the `## Runtime probe` section of RESULTS.md (up to the next `## `), nothing else."""
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    start = text.index("## Runtime probe")
    end = text.find("\n## ", start + 1)
    end = len(text) if end < 0 else end + 1
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text[:start] + "\n".join(md) + "\n\n" + text[end:])


def measure(python: str, workload: str, script: str, out: str, steps: int, repeat: int) -> list[tuple]:
    """Each configuration `repeat` times, taking turns (a load that comes and goes hits them alike)."""
    probe = [
        python,
        "-m",
        "torchlint",
        "probe",
        "--max-steps",
        str(steps + 10),
        "--max-seconds",
        "600",
        "--output-format",
        "json",
    ]
    configs = {
        "plain": [python, script, str(steps), out],
        "probe (real devices)": [*probe, "--no-simulate-cuda", script, "--", str(steps), out],
        "probe (simulated CUDA)": [*probe, "--simulate-cuda", script, "--", str(steps), out],
    }
    times: dict[str, list[float]] = {name: [] for name in configs}
    for _round in range(repeat):
        for name, cmd in configs.items():
            times[name].append(run(cmd, out))
    plain = statistics.median(times["plain"])
    return [
        (workload, steps, name, statistics.median(t), min(t), max(t), statistics.median(t) / plain)
        for name, t in times.items()
    ]


if __name__ == "__main__":
    main()
