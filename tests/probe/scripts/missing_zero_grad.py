import torch
from torch import nn

model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(6):
    x = torch.randn(8, 4)
    loss = model(x).pow(2).mean()
    loss.backward()
    optimizer.step()
