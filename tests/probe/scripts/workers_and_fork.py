"""Spawns DataLoader workers and a forked process that ignores SIGTERM; then trains forever."""
import os
import signal
import sys
import time

import torch
from torch import nn

pid_file = sys.argv[1]
child = os.fork()
if child == 0:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    os.setsid()
    while True:
        time.sleep(1)

dataset = torch.utils.data.TensorDataset(torch.randn(64, 4), torch.randn(64, 1))
loader = torch.utils.data.DataLoader(dataset, batch_size=8, num_workers=2, persistent_workers=True)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
iterator = iter(loader)
with open(pid_file, "w") as fh:
    fh.write(" ".join(str(p) for p in [child, *(w.pid for w in iterator._workers)]))
while True:
    for x, y in loader:
        optimizer.zero_grad()
        loss = (model(x) - y).pow(2).mean()
        loss.backward()
        optimizer.step()
