"""TL121 parameters-iterator-reused beyond its embedded examples."""

from __future__ import annotations

HEAD = "import torch\nfrom torch import nn\nmodel = nn.Linear(4, 2)\n"


def test_tl121_named_parameters_in_two_loops(findings):
    src = (
        HEAD
        + "named = model.named_parameters()\nfor n, p in named:\n    print(n)\nfor n, p in named:\n    p.requires_grad_(False)\n"
    )
    (f,) = findings(src, "TL121")
    assert f.line == 7


def test_tl121_self_parameters_in_a_module_method(findings):
    src = (
        "import torch\nfrom torch import nn\nclass Net(nn.Module):\n    def configure(self):\n"
        "        params = self.parameters()\n        n = sum(p.numel() for p in params)\n"
        "        return torch.optim.Adam(params)\n"
    )
    (f,) = findings(src, "TL121")
    assert f.line == 7


def test_tl121_optional_first_pass_still_reaches_the_second(findings):
    src = HEAD + "params = model.parameters()\nif verbose:\n    print(list(params))\ntorch.optim.SGD(params, lr=1)\n"
    (f,) = findings(src, "TL121")
    assert f.line == 7


def test_tl121_unknown_receiver_is_silent(findings):
    src = "import torch\ndef f(net):\n    params = net.parameters()\n    for p in params:\n        pass\n    torch.optim.SGD(params, lr=1)\n"
    assert findings(src, "TL121") == []


def test_tl121_shadowed_list_builtin_has_no_fix(findings):
    src = HEAD + "list = tuple\nparams = model.parameters()\nfor p in params:\n    pass\nfor p in params:\n    pass\n"
    (f,) = findings(src, "TL121")
    assert f.fix is None
