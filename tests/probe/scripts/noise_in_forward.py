"""A factory in `forward` scaled on its line: its CPU result meets the CUDA activations later."""

import torch
from torch import nn


class NoisyEncoder(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.proj = nn.Linear(width, width)

    def forward(self, x):
        noise = torch.randn(x.shape[0], x.shape[1]) * 0.01
        return self.proj(x + noise)


device = "cuda" if torch.cuda.is_available() else "cpu"
model = NoisyEncoder(12).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    batch = torch.randn(8, 12, device=device)
    loss = model(batch).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
