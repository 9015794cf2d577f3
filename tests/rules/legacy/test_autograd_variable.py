"""TL702 autograd-variable beyond its embedded examples."""

from __future__ import annotations


def test_tl702_volatile_gets_a_hint_and_no_fix(findings):
    (f,) = findings("from torch.autograd import Variable\nx = Variable(t, volatile=True)\n", "TL702")
    assert "no_grad" in f.message and f.fix is None
