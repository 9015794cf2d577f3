"""TL709 variable-volatile beyond its embedded examples."""

from __future__ import annotations


def test_tl709_a_variable_rebound_before_the_attribute_is_silent(findings):
    src = "from torch.autograd import Variable\nh = Variable(t)\nh = make_state()\nh.volatile = True\n"
    assert findings(src, "TL709") == []


def test_tl709_volatile_none_is_silent(findings):
    assert findings("from torch.autograd import Variable\nx = Variable(t, volatile=None)\n", "TL709") == []


def test_tl709_reports_the_call_once_and_offers_no_fix(findings):
    src = "import torch.autograd as ag\nx = ag.Variable(t, requires_grad=False, volatile=True)\n"
    [f] = findings(src, "TL709")
    assert (f.line, f.fix) == (2, None)


def test_tl709_model_output_attribute_is_reported(findings):
    src = "from torch import nn\nnet = nn.Linear(2, 2)\nout = net(x)\nprint(out.volatile)\n"
    assert [f.line for f in findings(src, "TL709")] == [4]
