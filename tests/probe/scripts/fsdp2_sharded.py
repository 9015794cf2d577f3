"""FSDP2 on one rank, as its tutorial writes it: a meta-device model sharded with `fully_shard`, then
materialised on the accelerator. Simulation cannot follow the sharded parameters (a real script got a
false device mismatch at every layer): the run must end as "simulation does not support" (exit 4)."""

import os
import tempfile

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.fsdp import fully_shard

device = torch.device("cuda", 0) if torch.cuda.is_available() else torch.device("cpu")
store = tempfile.mktemp()
dist.init_process_group("gloo", init_method=f"file://{store}", rank=0, world_size=1)
with torch.device("meta"):
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
for layer in model:
    if isinstance(layer, nn.Linear):
        fully_shard(layer)
fully_shard(model)
model.to_empty(device=device)
for p in model.parameters():
    nn.init.normal_(p.data.to_local() if hasattr(p.data, "to_local") else p.data)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for _ in range(3):
    loss = model(torch.randn(4, 8, device=device)).sum()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
dist.destroy_process_group()
os.unlink(store) if os.path.exists(store) else None
