"""Two processes started with torch.multiprocessing.spawn, each training on its own simulated GPU."""

import torch
import torch.multiprocessing as mp
from torch import nn


def train(rank):
    torch.cuda.set_device(rank)
    model = nn.Linear(4, 1).to(rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(3):
        optimizer.zero_grad()
        model(torch.randn(8, 4, device=f"cuda:{rank}")).sum().backward()
        optimizer.step()
    print(f"rank {rank} trained on {next(model.parameters()).device} of {torch.cuda.device_count()}")


if __name__ == "__main__":
    mp.spawn(train, nprocs=1)
