"""Trains 3 steps, then ends as asked: `exit N` (sys.exit), `os_exit N`, `kill` (SIGKILL), `argparse`."""

import argparse
import os
import signal
import sys

import torch
from torch import nn

how, status = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 0
model = nn.Linear(4, 1).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(3):
    optimizer.zero_grad()
    model(torch.randn(8, 4, device="cuda")).sum().backward()
    optimizer.step()
if how == "exit":
    sys.exit(status)
if how == "os_exit":
    os._exit(status)
if how == "kill":
    os.kill(os.getpid(), signal.SIGKILL)
if how == "argparse":
    argparse.ArgumentParser().parse_args(["--no-such-option"])
