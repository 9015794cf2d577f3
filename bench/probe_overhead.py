"""Probe overhead: training scripts timed plain and under `torchlint probe`, in the same run.

Two workloads: a small Adam-trained MLP and a recurrent language model
(`bench/probe_rnn_lm.py`). Each configuration runs the script in a fresh interpreter;
the script times its own training loop (after warm-up) so that interpreter start and
`import torch` are not counted. Prints a table; asserts nothing about time.

    python bench/probe_overhead.py [--steps N] [--repeat R]
"""

from __future__ import annotations

import argparse
import json
import os
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
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode not in (0, 1):  # the probe exits 1 when it observed something: still a timed run
        raise SystemExit(f"{' '.join(cmd)} exited {done.returncode}:\n{done.stderr[-2000:]}")
    with open(out) as fh:
        return json.load(fh)["ms_per_step"]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    print(f"{'workload':<10}{'configuration':<26}{'ms/step':>10}{'ratio':>8}")
    for workload, name, ms, ratio in measure_all(sys.executable, args.steps, args.repeat):
        print(f"{workload:<10}{name:<26}{ms:>10.3f}{ratio:>7.2f}x")


def measure_all(python: str, steps: int, repeat: int) -> list[tuple]:
    """(workload, configuration, ms per step, ratio to plain) for both workloads."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        mlp = os.path.join(tmp, "train.py")
        with open(mlp, "w") as fh:
            fh.write(MLP)
        for workload, script in (("MLP", mlp), ("RNN LM", RNN_LM)):
            rows += measure(python, workload, script, os.path.join(tmp, "out.json"), steps, repeat)
    return rows


def markdown(rows: list[tuple], steps: int, repeat: int) -> list[str]:
    """The RESULTS.md section: the table and the <= 1.5x target per workload and configuration."""
    md = [
        "## Runtime probe",
        "",
        f"`bench/probe_overhead.py`: each workload's training loop timed by the script itself over {steps} steps "
        f"after 5 warm-up steps, plain and under `torchlint probe`, in fresh interpreters; best of {repeat}.",
        "",
        "| workload | configuration | ms / step | ratio to plain | target ≤ 1.5× |",
        "|---|---|---|---|---|",
    ]
    for workload, name, ms, ratio in rows:
        target = "—" if name == "plain" else ("yes" if ratio <= 1.5 else "no")
        md.append(f"| {workload} | {name} | {ms:.3f} | {ratio:.2f}× | {target} |")
    return md


def measure(python: str, workload: str, script: str, out: str, steps: int, repeat: int) -> list[tuple]:
    """Best of `repeat` runs per configuration, each as a ratio to plain."""
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
    best = {name: min(run(cmd, out) for _ in range(repeat)) for name, cmd in configs.items()}
    return [(workload, name, ms, ms / best["plain"]) for name, ms in best.items()]


if __name__ == "__main__":
    main()
