"""Floods stdout and stderr (120 MB), then loops without ever stepping."""

import sys

import torch

chunk = "x" * 1_000_000 + "\n"
for _ in range(60):
    sys.stdout.write(chunk)
    sys.stderr.write(chunk)
while True:
    torch.randn(4).sum()
