import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = nn.CrossEntropyLoss()

for step in range(5):
    x = torch.randn(4, 8)
    y = torch.randint(0, 2, (4,))
    optimizer.zero_grad()
    out = model(x)
    loss = criterion(out, y.to(device))
    loss.backward()
    optimizer.step()
