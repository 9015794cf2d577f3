"""TL408 ddp-accumulation-without-no-sync beyond its embedded examples."""

from __future__ import annotations

LOOP = """\
import torch
from torch import nn
{wrap}
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for i, (x, y) in enumerate(loader):
{before}    loss = model(x).mean()
    loss.backward()
    if (i + 1) % 4 == 0:
        optimizer.step()
        optimizer.zero_grad()
"""
DDP = "model = nn.parallel.DistributedDataParallel(nn.Linear(4, 2).cuda())"


def test_tl408_dataparallel_has_no_all_reduce(findings):
    assert findings(LOOP.format(wrap="model = nn.DataParallel(nn.Linear(4, 2).cuda())", before=""), "TL408") == []


def test_tl408_ddp_is_reported_at_the_backward(findings):
    (f,) = findings(LOOP.format(wrap=DDP, before=""), "TL408")
    assert f.line == 7 and "model.no_sync()" in f.message


def test_tl408_manual_sync_toggle_is_respected(findings):
    before = "    model.require_backward_grad_sync = (i + 1) % 4 == 0\n"
    assert findings(LOOP.format(wrap=DDP, before=before), "TL408") == []


def test_tl408_backward_under_the_same_condition_is_not_accumulation(findings):
    src = (
        LOOP.format(wrap=DDP, before="")
        .replace("    loss.backward()\n", "")
        .replace("        optimizer.step()\n", "        loss.backward()\n        optimizer.step()\n")
    )
    assert findings(src, "TL408") == []
