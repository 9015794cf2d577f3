import torch
from torch import nn

model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
while True:
    try:
        optimizer.zero_grad()
        model(torch.randn(8, 4)).sum().backward()
    except Exception:
        pass
