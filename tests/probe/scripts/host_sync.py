import torch
from torch import nn

model = nn.Linear(8, 1).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
cpu_total = torch.zeros(())
for step in range(4):
    x = torch.randn(16, 8).cuda()
    optimizer.zero_grad()
    loss = model(x).pow(2).mean()
    loss.backward()
    optimizer.step()
    value = loss.item()
    if loss > 100:
        break
    positives = x[x > 0]
    cpu_total += torch.randn(()).item()
print(value)
for step in range(8):
    optimizer.zero_grad()
    loss = model(torch.randn(16, 8).cuda()).pow(2).mean()
    loss.backward()
    optimizer.step()
    if step % 4 == 0:
        print(f"loss {loss.item():.3f}")
