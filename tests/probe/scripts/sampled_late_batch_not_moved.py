"""From step 30 on, a batch stays on the CPU: a step between the probe's watched windows. The probe
sees it in the next watched window."""

import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"
model = nn.Linear(8, 2).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(70):
    x = torch.randn(16, 8)
    if step < 30:
        x = x.to(device)
    optimizer.zero_grad()
    loss = model(x).pow(2).mean()
    loss.backward()
    optimizer.step()
