"""What training scripts written for a GPU call, all of it correct: seeding, integer devices, a local
rank, DataParallel, a CUDA generator, legacy tensor types, packed sequences with CPU lengths, autocast,
and a checkpoint saved and loaded back without map_location."""

import os
import sys

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

torch.manual_seed(0)
torch.cuda.manual_seed_all(0)
torch.cuda.manual_seed(0)
rng_state = torch.cuda.get_rng_state()
local_rank = int(os.environ.get("LOCAL_RANK", 0))
torch.cuda.set_device(local_rank)
device = torch.device(local_rank)
generator = torch.Generator(device="cuda").manual_seed(1)


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(4, 8, batch_first=True)
        self.head = nn.Linear(8, 3)

    def forward(self, x, lengths):
        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        out, _ = self.rnn(packed)
        padded, _ = pad_packed_sequence(out, batch_first=True)
        return self.head(padded)


model = nn.DataParallel(Tagger().to(local_rank))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
checkpoint = sys.argv[1]
for step in range(6):
    x = torch.randn(4, 5, 4, device=device, generator=generator)
    lengths = torch.tensor([5, 2, 4, 3])  # stays on the CPU, as pack_padded_sequence requires
    target = torch.cuda.LongTensor(4, 5).random_(0, 3)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        logits = model(x, lengths)
    assert logits.dtype == torch.bfloat16 and logits.get_device() == local_rank
    loss = nn.functional.cross_entropy(logits.float().flatten(0, 1), target.flatten())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
torch.cuda.set_rng_state(rng_state)
torch.save(model.module.state_dict(), checkpoint)
state = torch.load(checkpoint)  # no map_location: back on the device it was saved from
assert all(t.is_cuda for t in state.values())
model.module.load_state_dict(state)
print("loaded", sorted({str(t.device) for t in state.values()}))
