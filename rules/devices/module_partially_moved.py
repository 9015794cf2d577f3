"""TL302 module-partially-moved: A submodule is moved to a device but the whole model is called"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.rule import SAFE, Invalid, Replace, Rule, fix
from torchlint.engine.semantic.kinds import Kind
from torchlint.engine.semantic.names import dotted
from torchlint.engine.torch.device_moves import move_call
from torchlint.findings import Severity


class ModulePartiallyMoved(Rule):
    code = "TL302"
    analyses = frozenset(
        {Analysis.CALL_SITES, Analysis.DEVICE_MOVES, Analysis.KINDS, Analysis.OWN_SUMMARY, Analysis.SCOPES}
    )
    requires = (".to", ".cuda")
    name = "module-partially-moved"
    message = (
        "only `{part}` is moved, but the whole `{root}` is called: its other submodules stay on the CPU "
        "(device-mismatch error); move the whole model with `{root}{suffix}`"
    )
    severity = Severity.ERROR
    category = "correctness"
    summary = "A submodule is moved to a device but the whole model is called"
    what = (
        "Flags `model.encoder.to(device)` / `model.head.cuda()` when `model` itself is never moved but is "
        "called (`model(x)`)."
    )
    why = (
        "Moving one submodule leaves the rest of the model's parameters on the CPU. The forward pass then "
        "mixes devices and fails, or — if the moved part is unused — the model silently trains on the CPU."
    )
    example = """\
import torch


class Seq2Seq(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder, self.decoder = torch.nn.GRU(8, 8), torch.nn.GRU(8, 8)


model = Seq2Seq()
model.encoder.to("cuda")
out = model(src)
"""
    fix_example = """\
import torch


class Seq2Seq(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder, self.decoder = torch.nn.GRU(8, 8), torch.nn.GRU(8, 8)


model = Seq2Seq()
model.to("cuda")
out = model(src)
"""
    fix_safety = "Safe: moving the whole module moves a superset of what was moved before."
    VALID = [
        'model = Seq2Seq()\nmodel.to("cuda")\nout = model(src)\n',
        # model parallelism: parts deliberately on different devices
        'model = Big()\nmodel.encoder.to("cuda:0")\nmodel.decoder.to("cuda:1")\nout = model(x)\n',
        # only the part is used
        "model = Seq2Seq()\nmodel.encoder.to(device)\nh = model.encoder(src)\n",
        "class M(nn.Module):\n    def setup(self):\n        self.head.to(self.device)\n",
    ]
    INVALID = [
        Invalid(
            "from torchvision.models import resnet18\nnet = resnet18()\nnet.fc.cuda()\nlogits = net(images)\n",
            line=3,
            fixed="from torchvision.models import resnet18\nnet = resnet18()\nnet.cuda()\nlogits = net(images)\n",
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        found = move_call(node, self.ctx.imports)
        if found is None or not isinstance(found[0], cst.Attribute):
            return
        part = dotted(found[0])
        if not part or part.startswith("self.") or ".module" in part:
            return
        root = part.split(".")[0]
        if not self.ctx.kind(cst.Name(root)) & Kind.MODEL:
            return
        moves = self.ctx.device_moves
        at = self.ctx.scope_node
        if moves.of(root, at) or root not in moves.called:
            return
        partial = moves.parts_of(root, at)
        if len({m.suffix for m in partial}) > 1:  # parts on different devices: model parallelism
            return
        suffix = partial[0].suffix if partial else ".to(device)"
        self.report(
            node,
            self.message.format(part=part, root=root, suffix=suffix),
            fix=fix(f"Move the whole `{root}`", Replace(found[0], root), applicability=SAFE),
        )
