"""A patch embedding that `.view`s a transposed tensor: the first forward call crashes."""

import torch
from torch import nn


class PatchEmbed(nn.Module):
    def __init__(self, channels: int, width: int):
        super().__init__()
        self.proj = nn.Linear(channels, width)

    def forward(self, images):
        tokens = images.flatten(2).transpose(1, 2).view(images.shape[0], -1)
        return self.proj(tokens.view(images.shape[0], -1, images.shape[1]))


model = PatchEmbed(3, 8)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    out = model(torch.randn(2, 3, 4, 4))
    out.sum().backward()
    optimizer.step()
    optimizer.zero_grad()
