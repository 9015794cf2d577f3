"""Multi-task training: the auxiliary head is used every other step; gradients are cleared every step."""

import torch
from torch import nn


class MultiTask(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(16, 32), nn.ReLU())
        self.main_head = nn.Linear(32, 4)
        self.aux_head = nn.Linear(32, 1)

    def forward(self, x, with_aux: bool):
        features = self.backbone(x)
        main = self.main_head(features)
        return (main, self.aux_head(features)) if with_aux else (main, None)


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = MultiTask().to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(6):
    x = torch.randn(8, 16, device=device)
    target = torch.randint(0, 4, (8,), device=device)
    optimizer.zero_grad()
    main, aux = model(x, with_aux=step % 2 == 0)
    loss = nn.functional.cross_entropy(main, target)
    if aux is not None:
        loss = loss + 0.1 * aux.pow(2).mean()
    loss.backward()
    optimizer.step()
