import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        noise = torch.randn(x.shape)
        return self.fc(x + noise)


model = Net().cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    optimizer.zero_grad()
    model(torch.randn(4, 8).cuda()).sum().backward()
    optimizer.step()
