"""A long loop that never clears gradients and flattens a transposed batch every step."""

import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(1024, 4)
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
features = torch.randn(16, 1024, 8)
for step in range(1000):
    x = features.transpose(1, 2).reshape(-1, 1024)
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
