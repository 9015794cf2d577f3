import torch
from torch import nn

backbone = nn.Sequential(nn.Linear(8, 16), nn.BatchNorm1d(16), nn.ReLU())
head = nn.Linear(16, 2)
for p in backbone.parameters():
    p.requires_grad_(False)
model = nn.Sequential(backbone, head).cuda()
opt = torch.optim.SGD(head.parameters(), lr=0.1, momentum=0.9)
G = nn.Linear(4, 8).cuda(); D = nn.Linear(8, 1).cuda()
opt_g = torch.optim.Adam(G.parameters()); opt_d = torch.optim.Adam(D.parameters())
for step in range(4):
    x = torch.randn(8, 8).cuda()
    model.zero_grad()
    nn.functional.cross_entropy(model(x), torch.randint(0, 2, (8,)).cuda()).backward()
    opt.step()
    z = torch.randn(8, 4, device="cuda")
    fake = G(z)
    opt_d.zero_grad()
    d_loss = D(fake.detach()).mean() - D(torch.randn(8, 8, device="cuda")).mean()
    d_loss.backward()
    opt_d.step()
    opt_g.zero_grad()
    g_loss = -D(fake).mean()
    g_loss.backward()
    opt_g.step()
