import torch
from torch import nn

model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
optimizer.zero_grad()
for i in range(12):
    loss = model(torch.randn(8, 4)).pow(2).mean() / 3
    loss.backward()
    if (i + 1) % 3 == 0:
        optimizer.step()
        optimizer.zero_grad()
