import torch
from torch import nn

conv = nn.Conv2d(3, 8, 3)
seq = torch.randn(32, 64, 16)
for step in range(3):
    a = seq.transpose(1, 2).reshape(32, -1)
    b = seq.reshape(32, -1)
    image = torch.randn(2, 3, 16, 16).to(memory_format=torch.channels_last)
    out = conv(image)
    same = conv.to(memory_format=torch.channels_last)(image)
    conv = conv.to(memory_format=torch.contiguous_format)
    small = seq[:2, :3].transpose(0, 1).reshape(-1)
