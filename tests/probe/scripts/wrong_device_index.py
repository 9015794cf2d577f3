import torch
from torch import nn

model = nn.Linear(4, 2).to("cuda:0")
x = torch.randn(8, 4).to("cuda:1")  # a second GPU that a one-GPU machine does not have
print(model(x).sum())
