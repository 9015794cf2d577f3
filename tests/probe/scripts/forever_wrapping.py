import torch
from torch import nn

try:  # all of it: wherever the limit's Stop lands, it comes back as a RuntimeError
    model = nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    while True:
        optimizer.zero_grad()
        model(torch.randn(8, 4)).sum().backward()
except BaseException as exc:  # as a library that wraps whatever a callback raises
    raise RuntimeError("wrapped") from exc
