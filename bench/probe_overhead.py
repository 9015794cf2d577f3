"""Probe overhead: the same training script timed plain and under `torchlint probe`, in the same run.

Each configuration runs the script in a fresh interpreter; the script times its own
training loop (after warm-up) so that interpreter start and `import torch` are not
counted. Prints a table; asserts nothing about time.

    python bench/probe_overhead.py [--steps N] [--repeat R]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

SCRIPT = """
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


def run(cmd: list[str], out: str) -> float:
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(out) as fh:
        return json.load(fh)["ms_per_step"]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "train.py")
        out = os.path.join(tmp, "out.json")
        with open(script, "w") as fh:
            fh.write(SCRIPT)
        probe = [
            sys.executable,
            "-m",
            "torchlint",
            "probe",
            "--max-steps",
            str(args.steps + 10),
            "--max-seconds",
            "600",
            "--output-format",
            "json",
        ]
        configs = {
            "plain": [sys.executable, script, str(args.steps), out],
            "probe (real devices)": [*probe, "--no-simulate-cuda", script, "--", str(args.steps), out],
            "probe (simulated CUDA)": [*probe, "--simulate-cuda", script, "--", str(args.steps), out],
        }
        best = {name: min(run(cmd, out) for _ in range(args.repeat)) for name, cmd in configs.items()}
    base = best["plain"]
    print(f"{'configuration':<26}{'ms/step':>10}{'ratio':>8}")
    for name, ms in best.items():
        print(f"{name:<26}{ms:>10.3f}{ms / base:>7.2f}x")


if __name__ == "__main__":
    main()
