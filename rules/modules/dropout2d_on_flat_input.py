"""TL206 dropout2d-on-flat-input: nn.Dropout2d/Dropout3d applied to a flat (N, C) activation"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.rule import UNSAFE, Invalid, NodeFix, Replace, Rule, fix
from torchlint.engine.semantic.values import current_where
from torchlint.engine.torch.shapes import RANK_KEEPING_MODULES, flattens, is_flat
from torchlint.findings import Severity

_CHANNEL_DROPOUT = {
    "torch.nn.Dropout2d": "Dropout",
    "torch.nn.Dropout3d": "Dropout",
    "torch.nn.functional.dropout2d": "dropout",
    "torch.nn.functional.dropout3d": "dropout",
}


class Dropout2dOnFlatInput(Rule):
    code = "TL206"
    analyses = frozenset({Analysis.GRAPH_BODIES, Analysis.VALUES})
    requires = ("ropout2d", "ropout3d")
    name = "dropout2d-on-flat-input"
    message = (
        "`{what}` drops whole channels of a (N, C, H, W) map, but it gets a flat (N, C) activation here "
        "(`{flat}`): that is element-wise dropout with a deprecation warning now and an error in a later "
        "torch; use `{fixed}`"
    )
    severity = Severity.WARNING
    category = "modernisation"
    summary = "nn.Dropout2d / Dropout3d applied to a flat (N, C) activation"
    what = (
        "Flags `nn.Dropout2d` / `nn.Dropout3d` (and `F.dropout2d` / `F.dropout3d`) applied to a value the code "
        "proves 2-D: the output of `x.flatten(1)`, `torch.flatten(x, 1)`, `x.view(n, -1)` or `nn.Flatten()`, "
        "followed by layers that keep the rank (`nn.Linear`, activations, `BatchNorm1d`) — in `forward` or in "
        "an `nn.Sequential`. Opt-in (modernisation): today the result is the element-wise dropout "
        "`nn.Dropout` computes, so nothing trains differently until a torch release turns the warning "
        "into an error."
    )
    why = (
        "Channel dropout zeroes entire feature maps and needs spatial dimensions. On a 2-D input torch "
        'warns "Received a 2-D input to dropout2d, which is deprecated and will result in an error in a '
        'future release" and falls back to element-wise dropout: the layer is `nn.Dropout` under a '
        "misleading name, and code written this way breaks when the deprecation completes."
    )
    example = """\
from torch import nn

head = nn.Sequential(nn.Flatten(), nn.Linear(512, 256), nn.ReLU(), nn.Dropout2d(0.5), nn.Linear(256, 10))
"""
    fix_example = """\
from torch import nn

head = nn.Sequential(nn.Flatten(), nn.Linear(512, 256), nn.ReLU(), nn.Dropout(0.5), nn.Linear(256, 10))
"""
    fix_safety = (
        "Unsafe: replaces the constructor, and the same module object may also be applied to a real feature "
        "map elsewhere, where it would then stop dropping whole channels. On the flat input it computes "
        "exactly what it computes now."
    )
    VALID = [
        # on a feature map
        "from torch import nn\nfeatures = nn.Sequential(nn.Conv2d(3, 16, 3), nn.ReLU(), nn.Dropout2d(0.2), nn.Flatten())\n",
        # element-wise dropout on the flat part
        "from torch import nn\nhead = nn.Sequential(nn.Flatten(), nn.Linear(64, 10), nn.Dropout(0.5))\n",
        # a reshape back to a map before the channel dropout
        """\
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 256)
        self.drop = nn.Dropout2d(0.1)
    def forward(self, x):
        h = self.fc(x.flatten(1))
        h = h.view(-1, 16, 4, 4)
        return self.drop(h)
""",
        # unknown rank: a parameter
        "from torch import nn\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.drop = nn.Dropout2d()\n    def forward(self, x):\n        return self.drop(x)\n",
    ]
    INVALID = [
        Invalid(
            """\
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(320, 50)
        self.drop = nn.Dropout2d(0.5)
    def forward(self, x):
        x = x.view(-1, 320)
        x = torch.relu(self.fc(x))
        return self.drop(x)
""",
            line=11,
            fixed="""\
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(320, 50)
        self.drop = nn.Dropout(0.5)
    def forward(self, x):
        x = x.view(-1, 320)
        x = torch.relu(self.fc(x))
        return self.drop(x)
""",
        ),
        Invalid(
            "import torch.nn.functional as F\ndef head(x, training):\n    return F.dropout2d(x.flatten(1), 0.5, training)\n",
            line=3,
            fixed="import torch.nn.functional as F\ndef head(x, training):\n    return F.dropout(x.flatten(1), 0.5, training)\n",
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        q = self.ctx.qualname(node.func)
        if q == "torch.nn.Sequential":
            self._sequential(node)
            return
        constructor: cst.Call | None
        if q in _CHANNEL_DROPOUT:  # functional
            constructor = node
        else:
            func = node.func
            built = self.ctx.values.builder(func, current_where(self.ctx)) if isinstance(func, cst.Attribute) else None
            constructor = built[0] if built is not None else None
            if (
                constructor is None
                or constructor is node
                or self.ctx.qualname(constructor.func) not in _CHANNEL_DROPOUT
            ):
                return
        if not node.args or node.args[0].keyword is not None or node.args[0].star:
            return
        flat = node.args[0].value
        if is_flat(self.ctx, flat, node):
            self._report(node, constructor, self.ctx.module.code_for_node(flat))

    def _sequential(self, node: cst.Call) -> None:
        """Layers in order: after `nn.Flatten()` every rank-keeping layer stays flat."""
        flat = False
        for arg in node.args:
            layer = arg.value
            q = self.ctx.qualname(layer.func) if isinstance(layer, cst.Call) else None
            if arg.keyword is not None or arg.star or not isinstance(layer, cst.Call) or q is None:
                flat = False
            elif q == "torch.nn.Flatten":
                flat = flattens(layer)
            elif q in _CHANNEL_DROPOUT and flat:
                self._report(layer, layer, "nn.Flatten()")
            elif q not in RANK_KEEPING_MODULES:
                flat = False

    def _report(self, node: cst.CSTNode, constructor: cst.Call, flat: str) -> None:
        q = self.ctx.qualname(constructor.func) or ""
        code = self.ctx.module.code_for_node
        replacement = _CHANNEL_DROPOUT[q]
        what = code(constructor.func)
        fixed = what.rpartition(".")[0] + "." + replacement if "." in what else replacement
        self.report(
            node, self.message.format(what=what, flat=flat, fixed=fixed), fix=self._fix(constructor, replacement)
        )

    def _fix(self, constructor: cst.Call, replacement: str) -> NodeFix | None:
        func = constructor.func
        if not isinstance(func, cst.Attribute):
            return None  # `from torch.nn import Dropout2d`: the import would need a change too
        new = func.with_changes(attr=cst.Name(replacement))
        return fix(
            f"Use `{replacement}`",
            Replace(func, new),
            applicability=UNSAFE,
            risk="drops single features instead of whole channels if the input is ever 4-D",
        )
