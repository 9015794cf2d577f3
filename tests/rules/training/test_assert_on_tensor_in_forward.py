"""TL122 assert-on-tensor-in-forward beyond its embedded examples."""

from __future__ import annotations

MODULE = """\
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
    def forward(self, x):
        out = self.fc(x)
        assert {test}
        return out
"""


def test_tl122_identity_and_membership_tests_are_host_checks(findings):
    for test in ("out is not None", "x.shape[0] == out.shape[0]", "out.dtype == torch.float32", "out.size(1) == 2"):
        assert findings(MODULE.format(test=test), "TL122") == [], test


def test_tl122_value_tests_on_proven_tensors(findings):
    for test in ("torch.allclose(out, out)", "out.sum() > 0", "not torch.isnan(out).any()", "(out == 0).all() or True"):
        assert len(findings(MODULE.format(test=test), "TL122")) == 1, test


def test_tl122_training_loop_body(findings):
    src = (
        "import torch\nfrom torch import nn\nmodel = nn.Linear(4, 2).cuda()\nfor x in loader:\n"
        "    loss = model(x).sum()\n    assert torch.isfinite(loss)\n    loss.backward()\n"
    )
    (f,) = findings(src, "TL122")
    assert f.line == 6 and "every step" in f.message


def test_tl122_an_epoch_loop_around_the_step_loop_is_not_a_step(findings):
    # barlowtwins' freeze-mode sanity check: once per epoch, after the step loop, over the state dict's keys
    src = (
        "import torch\nfrom torch import nn\nmodel = nn.Linear(4, 2).cuda()\nfor epoch in range(9):\n"
        "    for x in loader:\n        model(x).sum().backward()\n"
        "    for k in ref:\n        assert torch.equal(model.state_dict()[k].cpu(), ref[k]), k\n"
    )
    assert findings(src, "TL122") == []
    # inside the step loop, a loop over the keys still runs every step
    inner = src.replace("    for k in ref:\n        assert", "        for k in ref:\n            assert")
    assert [f.line for f in findings(inner, "TL122")] == [8]


def test_tl122_a_helper_that_never_runs_backward_is_not_a_step(findings):
    src = "import torch\ndef check(model, x):\n    out = model(x)\n    assert torch.isfinite(out).all()\n"
    assert findings(src, "TL122") == []


def test_tl122_a_test_function_is_not_a_training_step(findings):
    src = (
        "import torch\ndef test_step(model, x):\n    loss = model(x).sum()\n    loss.backward()\n"
        "    assert torch.isfinite(loss)\n"
    )
    assert findings(src, "TL122", path="tests/test_model.py") == []
    assert len(findings(src, "TL122")) == 1


def test_tl122_a_training_loop_in_a_test_file_checks_on_purpose(findings):
    src = (
        "import torch\nfrom torch import nn\nmodel = nn.Linear(4, 2).cuda()\nfor x in loader:\n"
        "    loss = model(x).sum()\n    loss.backward()\n    assert torch.isfinite(loss)\n"
    )
    assert findings(src, "TL122", path="scripts/test_sync.py") == []
    assert len(findings(src, "TL122")) == 1
