import torch
from torch import nn

model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(4):
    loss = model(torch.randn(8, 4)).pow(2).mean()
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 0.01)
    optimizer.step()
