"""A custom model; the batch stays on the CPU: the mismatch happens inside `forward`."""

import torch
from torch import nn


class Classifier(nn.Module):
    def __init__(self, features: int, classes: int):
        super().__init__()
        self.fc1 = nn.Linear(features, 32)
        self.fc2 = nn.Linear(32, classes)

    def forward(self, x):
        hidden = torch.relu(self.fc1(x))
        return self.fc2(hidden)


def train(model, loader, optimizer, device):
    loss_fn = nn.CrossEntropyLoss()
    for inputs, targets in loader:
        optimizer.zero_grad()
        out = model(inputs)
        loss = loss_fn(out, targets.to(device))
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    data = torch.utils.data.TensorDataset(torch.randn(64, 10), torch.randint(0, 3, (64,)))
    loader = torch.utils.data.DataLoader(data, batch_size=16, shuffle=True)
    model = Classifier(10, 3).to(device)
    train(model, loader, torch.optim.SGD(model.parameters(), lr=0.1), device)
