"""A recurrent language model for the probe overhead benchmark: a 2-layer LSTM over token batches,
truncated backpropagation through time (the hidden state is carried and detached), gradient clipping.

    python bench/probe_rnn_lm.py STEPS OUT.json   # times STEPS steps after 5 warm-up steps
"""

import json
import sys
import time

import torch
from torch import nn


class LanguageModel(nn.Module):
    def __init__(self, vocab: int = 100, width: int = 128, layers: int = 2):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.rnn = nn.LSTM(width, width, num_layers=layers, batch_first=True)
        self.head = nn.Linear(width, vocab)

    def forward(self, tokens, state=None):
        out, state = self.rnn(self.embed(tokens), state)
        return self.head(out), state


def main(steps: int, out: str) -> None:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    model = LanguageModel().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    corpus = torch.randint(0, 100, (16, 32 * (steps + 6) + 1))
    state = None
    for i in range(steps + 5):
        if i == 5:
            start = time.perf_counter()
        chunk = corpus[:, 32 * i : 32 * (i + 1) + 1].to(device)
        logits, state = model(chunk[:, :-1], state)
        state = tuple(s.detach() for s in state)
        loss = nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), chunk[:, 1:].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
    with open(out, "w") as fh:
        json.dump({"ms_per_step": (time.perf_counter() - start) * 1000 / steps}, fh)


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2])
