import torch
from torch import nn


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.scale = torch.ones(8)

    def forward(self, x):
        return self.fc(x) * self.scale


device = "cuda"
model = Scaled().to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    x = torch.randn(4, 8, device=device)
    optimizer.zero_grad()
    model(x).sum().backward()
    optimizer.step()
