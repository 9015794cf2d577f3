"""Catalogue II rules (TL2xx-TL8xx) never crash on odd but valid code."""

from __future__ import annotations

import pytest

from torchlint.engine import fix_text, lint_text
from torchlint.registry import rules

MINE = [cls for code, cls in rules().items() if code[2] in "2345678"]

EDGE = [
    "",
    "x.view()\nx.transpose().view(1)\nx.permute(*d).view(-1)\ny = x.mT.view\n",
    "import torch\ntorch.load()\ntorch.save()\ntorch.utils.data.DataLoader()\ntorch.range()\ntorch.norm()\n",
    "import torch\ntorch.qr(*a)\ntorch.cholesky(**k)\ntorch.chain_matmul()\ntorch.lu_solve(a)\n",
    "from torch.autograd import Variable\nVariable()\nVariable(*a)\n",
    "import torchvision\ntorchvision.models.resnet18(pretrained=True, pretrained=False)\n",
    "for in_ in loader:\n    pass\nfor (a, *b) in loader:\n    model(*b)\n",
    "model.to(device)\nfor x in enumerate(loader):\n    model(x)\nfor i, x, z in enumerate(loader):\n    model(x)\n",
    "import torch\nclass M(torch.nn.Module):\n    def __init__(self): self.a = 1\n    def forward(self, *args, **kw):\n        return torch.zeros(3)\n",
    "import torch\nclass M(torch.nn.Module):\n    def forward(self):\n        return [torch.ones(2) for _ in range(3)]\n",
    "from torch.nn.parallel import DistributedDataParallel as DDP\nDDP()\nDDP(*a)\nx = DDP(m).cuda().to(0)\n",
    "from torch.utils.data import DistributedSampler, DataLoader\nfor epoch in e:\n    pass\nDataLoader(d, sampler=DistributedSampler())\n",
    "self.layers = [nn.Linear(1, 1)]\nclass A:\n    def __init__(self):\n        self.l = []\n        self.l.append()\n",
    "p.require_grad, q.require_grad = True, False\n(a.require_grad) = 1\n",
    "import torch\nlambda x: torch.log(1 + x) + torch.exp(x) - 1\n",
    "async def f():\n    async for x, y in loader:\n        await model(x)\n",
    "match batch:\n    case {'x': x}:\n        model.cuda()(x)\n",
]


@pytest.mark.parametrize("src", EDGE, ids=range(len(EDGE)))
def test_no_rule_crashes(src):
    result = lint_text("edge.py", src, MINE)
    assert result.errors == []
    fixed = fix_text("edge.py", src, MINE)
    again = fix_text("edge.py", fixed.text, MINE)
    assert again.applied == 0
