"""Linear regression trained by hand: no optimizer, the update is written out after backward()."""

import torch

device = "cuda" if torch.cuda.is_available() else "cpu"
true_w = torch.tensor([[2.0], [-3.0]], device=device)
w = torch.zeros(2, 1, device=device, requires_grad=True)
b = torch.zeros(1, device=device, requires_grad=True)
lr = 0.1

for epoch in range(1000):
    x = torch.randn(32, 2, device=device)
    y = x @ true_w + 0.5
    loss = ((x @ w + b - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        for p in (w, b):
            p.data.add_(p.grad, alpha=-lr)
            p.grad.zero_()
    print(f"epoch {epoch} loss {loss.item():.4f}")
