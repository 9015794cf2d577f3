"""Optimizers whose options put their state on the GPU: `capturable=True` (its kernels assert that parameters
and state are on an accelerator) and `fused=True` (its `step` counts live on the GPU too), beside a default Adam
(its `step` counts stay on the CPU). Nothing is wrong."""

import torch
from torch import nn

torch.manual_seed(0)
models = [nn.Linear(4, 2).cuda() for _ in range(3)]
optimizers = [
    torch.optim.Adam(models[0].parameters(), capturable=True),
    torch.optim.Adam(models[1].parameters(), fused=True),
    torch.optim.Adam(models[2].parameters()),
]
x = torch.randn(8, 4).cuda()
for step in range(20):
    for model, optimizer in zip(models, optimizers):
        optimizer.zero_grad()
        model(x).sum().backward()
        optimizer.step()
for model, optimizer in zip(models, optimizers):
    state = optimizer.state[model.weight]
    print("state on", state["step"].device, state["exp_avg"].device)
