"""What simulated CUDA's function mode costs between watched windows, measured inside one probe run.

`bench/probe_overhead.py` compares separate processes, and on a shared machine the load moves
between them. Here the MLP of that benchmark runs under `torchlint probe --simulate-cuda`, and its
unwatched steps take turns, in blocks of 10, between three states: the probe's function mode
following device tags (what the probe does), the same mode passing every call through (the cost
of any `TorchFunctionMode`), and the mode taken off the stack (what the step costs without one).
Ratios of the medians of each state's steps (thread CPU time), so a load that comes and goes hits
all three alike. Prints a line per run; asserts nothing about time.

    python bench/probe_between_windows.py [--runs R] [--steps N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

SCRIPT = """
import json, statistics, sys, time
import torch
from torch import nn
from torchlint.probe import modes

steps, out = int(sys.argv[1]), sys.argv[2]
device = "cuda" if torch.cuda.is_available() else "cpu"
model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10)).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.CrossEntropyLoss()
x = torch.randn(32, 64).to(device); y = torch.randint(0, 10, (32,)).to(device)
follow = modes.FunctionMode._follow
def passing(self, func, args, kwargs):
    return func(*args, **kwargs)
times = {"follow": [], "pass": [], "off": []}
popped = []
for i in range(steps):
    state = ("follow", "pass", "off")[(i // 10) % 3]
    modes.FunctionMode._follow = passing if state == "pass" else follow
    popped += [torch._C._pop_torch_function_stack()] if state == "off" and torch._C._len_torch_function_stack() else []
    start = time.thread_time()
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    times[state].append(time.thread_time() - start)
    [torch._C._push_on_torch_function_stack(popped.pop()) for _ in list(popped)]
modes.FunctionMode._follow = follow
with open(out, "w") as fh:
    json.dump({k: statistics.median(v[3:]) * 1000 for k, v in times.items()}, fh)
"""


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--steps", type=int, default=1500)
    args = p.parse_args()
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    with tempfile.TemporaryDirectory() as tmp:
        script, out = os.path.join(tmp, "train.py"), os.path.join(tmp, "out.json")
        with open(script, "w") as fh:
            fh.write(SCRIPT)
        for _run in range(args.runs):
            cmd = [sys.executable, "-m", "torchlint", "probe", "--simulate-cuda", "--max-steps", str(args.steps + 10)]
            subprocess.run([*cmd, script, "--", str(args.steps), out], env=env, check=True, capture_output=True)
            with open(out) as fh:
                ms = json.load(fh)
            off = ms["off"]
            print(
                f"ms/step: mode off {off:.3f}, pass-through mode {ms['pass']:.3f} ({ms['pass'] / off:.2f}x), "
                f"following mode {ms['follow']:.3f} ({ms['follow'] / off:.2f}x)"
            )


if __name__ == "__main__":
    main()
