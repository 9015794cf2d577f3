"""Rank 1 crashes before the process group forms (a second GPU that is not there); rank 0 waits in it."""

import os

import torch
import torch.distributed as dist

if int(os.environ["LOCAL_RANK"]) == 1:
    raise RuntimeError("CUDA error: invalid device ordinal")
dist.init_process_group("gloo")
model = torch.nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    optimizer.zero_grad()
    model(torch.randn(8, 4)).sum().backward()
    optimizer.step()
dist.destroy_process_group()
