"""A recurrent model trained for 70 steps on the (simulated) GPU: most steps fall between the probe's
watched windows, where the hidden state, the targets and the gradients are made. Nothing is wrong."""

import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
rnn = nn.GRU(8, 16, batch_first=True).to(device)
head = nn.Linear(16, 4).to(device)
optimizer = torch.optim.Adam([*rnn.parameters(), *head.parameters()], lr=1e-3)
state = None
devices = set()
for step in range(70):
    x = torch.randn(4, 5, 8).to(device)
    out, state = rnn(x, state)
    state = state.detach()
    logits = head(out[:, -1])
    target = torch.randint(0, 4, (4,)).to(logits.device)
    loss = nn.functional.cross_entropy(logits, target)
    optimizer.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(rnn.parameters(), 1.0)
    optimizer.step()
    devices |= {str(t.device) for t in (out, state, logits, loss, rnn.weight_ih_l0.grad, head.weight)}
print(sorted(devices))
