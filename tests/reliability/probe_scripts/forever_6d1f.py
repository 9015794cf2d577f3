"""Runs until stopped: the probe must stop it when asked to (SIGINT), however it was started."""

import torch

while True:
    torch.randn(4).sum()
