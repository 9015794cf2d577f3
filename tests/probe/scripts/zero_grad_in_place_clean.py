import torch
from torch import nn

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
for step in range(4):
    optimizer.zero_grad(set_to_none=False)
    loss = model(torch.randn(8, 4)).pow(2).mean()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    optimizer.step()
optimizer.zero_grad()
for step in range(3):
    loss = model(torch.randn(8, 4)).pow(2).mean()
    loss.backward()
    optimizer.step()
    for p in model.parameters():
        p.grad = None
