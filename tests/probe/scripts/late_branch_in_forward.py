"""From step 5 on, the model's forward takes a branch it never took before, which leaves its input on the
CPU: a device mismatch in every step from there on."""

import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 1)
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        if self.calls >= 5:
            x = x.cpu()
        return self.fc(x)


model = Net().cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(4, 8).cuda()
for step in range(12):
    optimizer.zero_grad()
    model(x).sum().backward()
    optimizer.step()
