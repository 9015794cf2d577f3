"""What a helper's statements mean depends on how it is called: parameters alias the caller's values,
a guard at the call site makes the helper periodic, a grad-mode block at every call site turns autograd off."""

from __future__ import annotations

import pytest

from torchlint.engine.runner import lint_text
from torchlint.registry import rules

TRAIN = """\
import torch
from torch import nn
model = nn.Sequential(nn.Linear(4, 2), nn.Dropout(0.1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loader = torch.utils.data.DataLoader(data)
{helper}
for epoch in range(3):
{restore}    for step, (x, y) in enumerate(loader):
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
{call}
"""
HELPER = """\
def accuracy(net, data):
    net.eval()
    correct = 0
    for x, y in data:
        correct += (net(x).argmax(1) == y).sum().item()
    torch.cuda.empty_cache()
    return correct
"""


def _codes(restore: str, call: str) -> list[str]:
    code = TRAIN.format(helper=HELPER, restore=restore, call=call)
    found = lint_text("t.py", code, [rules()[c] for c in ("TL110", "TL111", "TL114")]).findings
    return sorted(f.code for f in found)


def test_the_mode_a_helper_sets_through_its_parameter_is_the_callers():
    assert "TL111" not in _codes("    model.train()\n", "    accuracy(model, loader)")
    assert "TL111" in _codes("", "    accuracy(model, loader)")  # nothing sets `model` back


@pytest.mark.parametrize(
    "call,periodic",
    [
        ("        accuracy(model, loader)", False),  # every step
        ("        if step % 100 == 0:\n            accuracy(model, loader)", True),
    ],
)
def test_a_guard_at_the_call_site_makes_the_helper_periodic(call, periodic):
    assert ("TL114" in _codes("    model.train()\n", call)) is not periodic


@pytest.mark.parametrize(
    "call,off",
    [
        ("    accuracy(model, loader)", False),
        ("    with torch.set_grad_enabled(False):\n        accuracy(model, loader)", True),
        ("    with torch.no_grad():\n        accuracy(model, loader)", True),
        ("    with torch.set_grad_enabled(training):\n        accuracy(model, loader)", False),  # maybe on
    ],
)
def test_a_helper_every_caller_runs_with_autograd_off(call, off):
    assert ("TL110" in _codes("    model.train()\n", call)) is not off
