import os

import torch
from torch import nn

model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(3):
    optimizer.zero_grad()
    model(torch.randn(8, 4)).sum().backward()
    optimizer.step()
os._exit(7)
