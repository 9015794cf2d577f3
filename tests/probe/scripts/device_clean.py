import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Sequential(nn.Linear(8, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Dropout(0.1), nn.Linear(16, 2)).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-4)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2)
criterion = nn.CrossEntropyLoss()
dataset = torch.utils.data.TensorDataset(torch.randn(32, 8), torch.randint(0, 2, (32,)))
loader = torch.utils.data.DataLoader(dataset, batch_size=4, pin_memory=True)

model.train()
for x, y in loader:
    x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
    optimizer.zero_grad(set_to_none=True)
    loss = criterion(model(x), y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    scheduler.step()
    mask = torch.ones(4, device=x.device) + torch.tensor(1.0)

state = {k: v.cpu() for k, v in model.state_dict().items()}
