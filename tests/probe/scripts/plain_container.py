import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = [nn.Linear(4, 4) for _ in range(2)]
        self.kept = nn.ModuleList([nn.Linear(4, 4)])
        self.out = nn.Linear(4, 1)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        for block in self.kept:
            x = block(x)
        return self.out(x)


model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(3):
    optimizer.zero_grad()
    model(torch.randn(8, 4)).pow(2).mean().backward()
    optimizer.step()
