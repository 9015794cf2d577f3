"""TL303 hard-coded-cuda beyond its embedded examples."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    "src",
    [
        "import torch\ndef f(x):\n    if x.is_cuda:\n        return x.cuda()\n",
        "import torch\nargs = parser.parse_args()\nif args.gpu:\n    net.cuda()\n",
        "import torch\nimport pytest\n@pytest.mark.skipif(not torch.cuda.is_available(), reason='gpu')\ndef test_gpu():\n    torch.ones(2).cuda()\n",
        "import torch\nuse_cuda = torch.cuda.is_available()\nx = x.cuda(non_blocking=True) if use_cuda else x\n",
        "x = x.to(device)\n",
    ],
)
def test_tl303_guarded_or_variable_device_is_silent(src, findings):
    assert findings(src, "TL303") == []


def test_tl303_reports_each_hard_coded_spelling(findings):
    src = 'import torch\na = torch.zeros(2, device="cuda:1")\nb = a.to("cuda")\nc = b.cuda(0)\n'
    assert [f.line for f in findings(src, "TL303")] == [2, 3, 4]


def test_tl303_a_name_is_not_a_guard(findings):
    # `use_gpu` is set by hand: nothing checks that a GPU is there
    assert [f.line for f in findings("import torch\nuse_gpu = True\nif use_gpu:\n    model.cuda()\n", "TL303")] == [4]
    assert findings("import torch\nuse_gpu = torch.cuda.is_available()\nif use_gpu:\n    model.cuda()\n", "TL303") == []


@pytest.mark.parametrize(
    "src",
    [
        # the caller hands the choice in: a parameter ...
        "import torch\ndef check(net, x, train_on_gpu):\n    if(train_on_gpu):\n        net.cuda()\n        x = x.cuda()\n",
        "import torch\ndef outer(use_gpu):\n    def inner(x):\n        return x.cuda() if use_gpu else x\n    return inner\n",
        # ... an attribute of a parameter (the caller's command-line arguments, pytorch-cifar100's get_network)
        "import torch\ndef get_network(args):\n    net = Net()\n    if args.gpu:\n        net = net.cuda()\n    return net\n",
        # ... or an attribute that only ever stores one, here or in a base class of this file
        "import torch\nclass Base:\n    def __init__(self, use_gpu=True):\n        self.use_gpu = use_gpu\n"
        "class L2(Base):\n    def forward(self, v):\n        if(self.use_gpu):\n            v = v.cuda()\n        return v\n",
    ],
)
def test_tl303_a_device_choice_handed_in_by_the_caller_is_not_hard_coded(src, findings):
    assert findings(src, "TL303") == []


@pytest.mark.parametrize(
    "src,line",
    [
        # the attribute is set by hand somewhere: the class itself decides, nothing checks a GPU is there
        (
            "import torch\nclass A:\n    def __init__(self, use_gpu):\n        self.use_gpu = use_gpu\n"
            "    def gpu(self):\n        self.use_gpu = True\n    def f(self, v):\n        if self.use_gpu:\n            v.cuda()\n",
            9,
        ),
        # a local, not a parameter
        ("import torch\ndef f(v):\n    use_gpu = True\n    if use_gpu:\n        v.cuda()\n", 5),
        # an attribute of the method's own object, set by hand
        ("import torch\nclass A:\n    def f(self, v):\n        if self.on:\n            v.cuda()\n", 5),
    ],
)
def test_tl303_a_choice_the_code_makes_itself_is_still_hard_coded(src, line, findings):
    assert [f.line for f in findings(src, "TL303")] == [line]
