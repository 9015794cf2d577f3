"""Linear regression trained by hand; the update never clears the gradient, so each step adds to it."""

import torch

device = "cuda" if torch.cuda.is_available() else "cpu"
true_w = torch.tensor([[2.0], [-3.0]], device=device)
w = torch.zeros(2, 1, device=device, requires_grad=True)
b = torch.zeros(1, device=device, requires_grad=True)
lr = 0.01

for epoch in range(12):
    x = torch.randn(32, 2, device=device)
    loss = ((x @ w + b - x @ true_w) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= lr * w.grad
        b -= lr * b.grad
