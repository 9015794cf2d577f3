"""TL105 loss-accumulated-with-graph beyond its embedded examples: look-alikes that must stay silent, bugs
that hide in classes, helpers and nested blocks, and where each finding lands."""

from __future__ import annotations

import textwrap

import pytest

CASES = [
    # (id, path, source, expected lines)
    (
        "loss-times-batch-size",
        "a.py",
        """
        def train(model, loader, optimizer):
            running_loss = 0.0
            for inputs, labels in loader:
                optimizer.zero_grad()
                loss = model(inputs).mean()
                loss.backward()
                optimizer.step()
                running_loss += loss * inputs.size(0)
            return running_loss.item()
    """,
        [8],
    ),
    (
        "hugging-face-output-loss",
        "a.py",
        """
        def train(model, loader, optimizer):
            losses = []
            for batch in loader:
                outputs = model(**batch)
                loss = outputs.loss
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
                losses.append(loss)
            return len(losses)
    """,
        [9],
    ),
    (
        "loss-detached-before-accumulating",
        "a.py",
        """
        total = 0
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            loss = loss.detach()
            total += loss
    """,
        [],
    ),
    (
        "eval-loss-under-no-grad-decorator",
        "a.py",
        """
        import torch
        @torch.no_grad()
        def evaluate(model, loader):
            total = 0
            for x, y in loader:
                total += criterion(model(x), y)
            return total
    """,
        [],
    ),
    (
        "accumulated-loss-returned-for-the-caller",
        "a.py",
        """
        def closure(model, chunks):
            total = 0
            for x, y in chunks:
                loss = criterion(model(x), y)
                total += loss
            return total
    """,
        [],
    ),
    (
        "loss-rebound-to-a-number",
        "a.py",
        """
        total = 0
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            loss = loss.item()
            total += loss
    """,
        [],
    ),
    (
        "field-of-an-output-computed-under-no-grad",
        "a.py",
        """
        import torch
        def evaluate(model, loader):
            losses = []
            for batch in loader:
                with torch.no_grad():
                    outputs = model(**batch)
                loss = outputs.loss
                losses.append(loss)
            return torch.stack(losses).mean()
    """,
        [],
    ),
    (
        "returned-total-and-history-after-backward",
        "a.py",
        """
        import torch.nn.functional as F
        def train_epoch(model, opt, loader):
            history = []
            total = 0
            for x, y in loader:
                opt.zero_grad()
                loss = F.mse_loss(model(x), y)
                loss.backward()
                opt.step()
                history.append(loss)
                total += loss
            return history, total
    """,
        [10, 11],
    ),
    (
        "yielded-after-scaled-backward",
        "a.py",
        """
        import torch.nn.functional as F
        def train_epoch(model, opt, loader, accum):
            losses = []
            for x, y in loader:
                loss = F.cross_entropy(model(x), y)
                (loss / accum).backward()
                losses.append(loss)
            yield losses
    """,
        [7],
    ),
    (
        "returned-loss-reassigned-after-backward",
        "a.py",
        """
        def train_epoch(model, loader):
            losses = []
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                loss = criterion(model(x), y)
                losses.append(loss)
            return losses
    """,
        [],
    ),
    (
        "returned-backward-in-an-inner-loop",
        "a.py",
        """
        def train_epoch(model, loader):
            losses = []
            for x, y in loader:
                loss = criterion(model(x), y)
                for _ in range(2):
                    loss.backward(retain_graph=False)
                losses.append(loss)
            return losses
    """,
        [],
    ),
    # a sequence unrolled over time steps: the decoder hands its state to the next step, so the steps build one
    # graph and their total is the sequence's loss (it dies with the call), not a leak across steps
    (
        "sequence-loss-over-recurrent-time-steps",
        "a.py",
        """
        import torch.nn.functional as F
        from torch import nn
        class Decoder(nn.Module):
            def forward(self, x, h):
                h = self.cell(x, h)
                return self.out(h), h
        decoder = Decoder()
        def sequence_loss(inputs, targets, hidden):
            loss = 0
            for t in range(len(targets)):
                output, hidden = decoder(inputs[t], hidden)
                loss += F.mse_loss(output, targets[t])
            return loss.item() / len(targets)
    """,
        [],
    ),
    # the same total, bound before the loop over sequences too: it keeps every sequence's graph
    (
        "sequence-losses-summed-over-the-data",
        "a.py",
        """
        import torch.nn.functional as F
        from torch import nn
        class Decoder(nn.Module):
            def forward(self, x, h):
                h = self.cell(x, h)
                return self.out(h), h
        decoder = Decoder()
        def evaluate(pairs, hidden):
            loss = 0
            for inputs, targets in pairs:
                state = hidden
                for t in range(len(targets)):
                    output, state = decoder(inputs[t], state)
                    loss += F.mse_loss(output, targets[t])
            return loss.item()
    """,
        [14],
    ),
    # time steps that share no state: each step's graph is its own, and the total keeps them all
    (
        "time-steps-without-carried-state",
        "a.py",
        """
        import torch.nn.functional as F
        from torch import nn
        def sequence_loss(model: nn.Linear, inputs, targets):
            loss = 0
            for t in range(len(targets)):
                loss += F.mse_loss(model(inputs[t]), targets[t])
            return loss.item()
    """,
        [6],
    ),
    # an epoch's loss is the numpy mean of its steps' `.item()` numbers: a host number, although `loss` also
    # names a tensor in the same (notebook) scope
    (
        "numpy-mean-of-step-losses",
        "a.py",
        """
        import numpy as np
        import torch.nn.functional as F
        loss = F.mse_loss(model(x), y)
        loss.backward()
        def epoch_loss(loader, step):
            losses = []
            for xb, yb in loader:
                losses.append(step(xb, yb))
            return np.mean(losses)
        history = []
        for epoch in range(10):
            loss = epoch_loss(loader, step)
            history.append(loss)
    """,
        [],
    ),
    (
        "returned-for-a-joint-backward",
        "a.py",
        """
        import torch
        def train_step(model, heads, x, y):
            losses = []
            for head in heads:
                losses.append(criterion(head(model(x)), y))
            return losses
        def fit(model, heads, x, y):
            torch.stack(train_step(model, heads, x, y)).sum().backward()
    """,
        [],
    ),
    (
        # a total stored in a dict the function returns is returned: the caller's loss to back-propagate
        "stored-in-a-returned-dict",
        "a.py",
        """
        import torch
        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.criterion = torch.nn.L1Loss()
            def generator_losses(self, fakes, reals):
                losses = {}
                feat = torch.zeros(1)
                for i in range(len(fakes)):
                    feat += self.criterion(fakes[i], reals[i].detach())
                losses["feat"] = feat
                return losses
    """,
        [],
    ),
    (
        "stored-in-a-dict-that-stays",
        "a.py",
        """
        import torch
        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.criterion = torch.nn.L1Loss()
            def generator_losses(self, fakes, reals, log):
                losses = {}
                feat = torch.zeros(1)
                for i in range(len(fakes)):
                    feat += self.criterion(fakes[i], reals[i].detach())
                losses["feat"] = feat
                log.append(losses)
    """,
        [10],
    ),
]


@pytest.mark.parametrize("case,path,src,lines", CASES, ids=[c[0] for c in CASES])
def test_case(case, path, src, lines, findings):
    got = findings(textwrap.dedent(src).lstrip("\n"), "TL105", path)
    assert [f.line for f in got] == lines, [f"{f.line}: {f.message}" for f in got]


def test_tl105_message_parenthesises_an_operation_before_detach():
    """`cost / total_batch.detach()` would detach the int (and raise): the message names the whole value's."""
    from torchlint.engine import lint_text
    from torchlint.registry import rules

    src = (
        "import torch\navg = 0\nfor x, y in loader:\n    opt.zero_grad()\n    cost = criterion(model(x), y)\n"
        "    cost.backward()\n    opt.step()\n    avg += cost / total_batch\n"
    )
    found = lint_text("t.py", src, [rules()["TL105"]]).findings
    assert found and "`(cost / total_batch).detach()`" in found[0].message
