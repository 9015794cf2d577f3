"""LBFGS runs its closure (a forward and a backward) inside `step()`: the closure runs under the simulation
in every step, watched or not, so what it makes reads the device it has on a GPU. The only observations are
LBFGS's own host syncs (`float(loss)` and a truth test in its `step()`), real waits on a GPU."""

import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(4, 1).cuda()
optimizer = torch.optim.LBFGS(model.parameters(), max_iter=2)
x, y = torch.randn(16, 4).cuda(), torch.randn(16, 1).cuda()
seen = set()


def closure():
    optimizer.zero_grad()
    out = model(x)
    seen.add(str(out.device))
    loss = ((out - y) ** 2).mean()
    loss.backward()
    return loss


for step in range(30):
    optimizer.step(closure)
print("closure outputs on", sorted(seen))
