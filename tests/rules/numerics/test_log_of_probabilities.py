"""TL808 log-of-probabilities beyond its embedded examples."""

from __future__ import annotations


def test_tl808_torch_aliases_and_special_functions(findings, fixed):
    src = "import torch as T\ny = T.log(T.special.expit(z))\nw = T.softmax(x, 1).log()\n"
    assert [f.line for f in findings(src, "TL808")] == [2, 3]
    assert fixed(src, "TL808") == "import torch as T\ny = T.nn.functional.logsigmoid(z)\nw = T.log_softmax(x, 1)\n"


def test_tl808_a_module_call_is_not_a_proven_activation(findings):
    # `model.softmax` takes an input, not a dim: a method of something else, not the tensor method
    assert findings("import torch\ny = torch.log(model.softmax(x))\ny = head.sigmoid(x).log()\n", "TL808") == []


def test_tl808_other_logs_are_silent(findings):
    src = (
        "import torch\ny = torch.log(torch.exp(x))\nz = torch.log(torch.sigmoid(x), out=buf)\nw = x.sigmoid().log2()\n"
    )
    assert findings(src, "TL808") == []


def test_tl808_message_names_the_fused_function(findings):
    (f,) = findings("import torch\ny = torch.log(torch.sigmoid(z))\n", "TL808")
    assert "logsigmoid" in f.message and "-inf" in f.message
