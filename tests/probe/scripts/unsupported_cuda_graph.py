import torch
from torch import nn

model = nn.Linear(4, 2).cuda()
graph = torch.cuda.CUDAGraph()  # CUDA graphs capture real kernels: simulated CUDA has none
print(model(torch.randn(8, 4, device="cuda")).sum())
