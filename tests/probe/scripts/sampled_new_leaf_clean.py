"""A leaf first reached by backward() between the probe's watched windows keeps its gradient into the next
window, where the script reads it after backward(). Nothing is wrong."""

import torch
from torch import nn
device = "cuda" if torch.cuda.is_available() else "cpu"
model = nn.Linear(4, 1).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
extra = None
for step in range(70):
    if step == 20:
        extra = torch.zeros(4, device=device, requires_grad=True)  # a leaf first reached between windows
    opt.zero_grad()
    x = torch.randn(8, 4, device=device)
    out = model(x if extra is None else x + extra)
    out.pow(2).mean().backward()
    opt.step()
    if extra is not None:
        with torch.no_grad():
            extra.add_(extra.grad, alpha=-0.1)  # grad kept (never reset): made at step 21, unwatched
