import torch
from torch import nn


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.register_buffer("scale", torch.ones(8))

    def forward(self, x):
        offset = torch.zeros(x.shape[-1], device=x.device)
        return self.fc(x) * self.scale + offset


device = "cuda"
model = Scaled().to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    x = torch.randn(4, 8).cuda()
    optimizer.zero_grad()
    model(x).sum().backward()
    optimizer.step()
