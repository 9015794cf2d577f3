"""A second optimizer, made and first stepped between the probe's watched windows: its Adam state is
created inside that unwatched step, lives on the GPU and is used in the next window. Nothing is wrong."""

import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"
body = nn.Linear(8, 16).to(device)
optimizer = torch.optim.Adam(body.parameters(), lr=1e-3)
head = head_optimizer = None
for step in range(70):
    if step == 20:
        head = nn.Linear(16, 4).to(device)
        head_optimizer = torch.optim.Adam(head.parameters(), lr=1e-3)
    x = torch.randn(4, 8, device=device)
    out = body(x) if head is None else head(body(x))
    loss = out.pow(2).mean()
    optimizer.zero_grad()
    if head_optimizer is not None:
        head_optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if head_optimizer is not None:
        before = torch.cuda.memory_allocated() if device == "cuda" else 0
        head_optimizer.step()
        if step == 20:  # exp_avg and exp_avg_sq of a 16x4 weight and 4 biases, in float32
            print("state bytes on the GPU:", (torch.cuda.memory_allocated() if device == "cuda" else 0) - before)
