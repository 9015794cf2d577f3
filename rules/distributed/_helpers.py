"""What more than one distributed rule needs."""

from __future__ import annotations

DDP = "torch.nn.parallel.DistributedDataParallel"
DIST_SAMPLER = "torch.utils.data.DistributedSampler"
