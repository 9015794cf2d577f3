"""TL307 packed-lengths-on-device: pack_padded_sequence given lengths that live on an accelerator"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.core.callargs import get_arg, string_value
from torchlint.engine.flow.graph_flow import Body, body_of
from torchlint.engine.rule import SAFE, Invalid, NodeFix, Replace, Rule, fix
from torchlint.engine.semantic.kinds import SAME_DEVICE_METHODS, TENSOR_FACTORIES
from torchlint.engine.semantic.values import current_where
from torchlint.engine.torch.device_moves import move_call
from torchlint.findings import Severity

from ._helpers import is_device

PACK = "torch.nn.utils.rnn.pack_padded_sequence"
_FIXABLE = (cst.Name, cst.Attribute, cst.Call, cst.Subscript)


class PackedLengthsOnDevice(Rule):
    code = "TL307"
    analyses = frozenset(
        {
            Analysis.BUILT_CLASSES,
            Analysis.CALL_SITES,
            Analysis.GRAPH_BODIES,
            Analysis.KINDS,
            Analysis.OWN_SUMMARY,
            Analysis.SCOPES,
            Analysis.VALUES,
        }
    )
    requires = ("pack_padded_sequence",)
    name = "packed-lengths-on-device"
    message = (
        "`{lengths}` is on the accelerator (`{move}`), but `pack_padded_sequence` requires its lengths on the "
        "CPU (a 1-D CPU int64 tensor or a list): RuntimeError on every call; pass `{lengths}.cpu()`"
    )
    severity = Severity.ERROR
    category = "correctness"
    summary = "pack_padded_sequence given lengths moved to (or built on) the GPU"
    what = (
        "Flags `pack_padded_sequence(x, lengths)` when `lengths` was moved to an accelerator "
        "(`lengths.cuda()`, `.to(device)` with a device) or built on one (`torch.tensor(..., device=device)`) "
        "— directly, or by passing it to a model whose `forward` hands that argument unchanged to "
        "`pack_padded_sequence` (this file's model class or a project one)."
    )
    why = (
        "Since PyTorch 1.7 `pack_padded_sequence` refuses lengths on the GPU: \"'lengths' argument should be a "
        '1D CPU int64 tensor". A training script that moves the whole batch to the device, lengths '
        "included, crashes at the first step on a GPU machine (and runs on a laptop's CPU)."
    )
    example = """\
import torch
from torch.nn.utils.rnn import pack_padded_sequence

device = torch.device("cuda")
for tokens, lengths in loader:
    tokens, lengths = tokens.to(device), lengths.to(device)
    packed = pack_padded_sequence(embed(tokens), lengths, batch_first=True)
"""
    fix_example = """\
import torch
from torch.nn.utils.rnn import pack_padded_sequence

device = torch.device("cuda")
for tokens, lengths in loader:
    tokens, lengths = tokens.to(device), lengths.to(device)
    packed = pack_padded_sequence(embed(tokens), lengths.cpu(), batch_first=True)
"""
    fix_safety = (
        "Safe: `.cpu()` copies the lengths to where `pack_padded_sequence` requires them; the values are the same."
    )
    VALID = [
        # copied back to the CPU
        """\
import torch
from torch.nn.utils.rnn import pack_padded_sequence
lengths = lengths.cuda()
packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True)
""",
        # a list
        """\
import torch
from torch.nn.utils.rnn import pack_padded_sequence
lengths = [len(s) for s in batch]
packed = pack_padded_sequence(x.cuda(), lengths, batch_first=True)
""",
        # moved to the CPU explicitly
        """\
import torch
from torch.nn.utils.rnn import pack_padded_sequence
lengths = lengths.to("cpu")
packed = pack_padded_sequence(x, lengths)
""",
        # unknown: a parameter
        """\
from torch.nn.utils.rnn import pack_padded_sequence
def encode(x, lengths):
    return pack_padded_sequence(x, lengths, batch_first=True)
""",
        # the model's forward copies them itself
        """\
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence
class Enc(nn.Module):
    def forward(self, x, lengths):
        return pack_padded_sequence(x, lengths.cpu(), batch_first=True)
model = Enc().cuda()
out = model(x.cuda(), lengths.cuda())
""",
    ]
    INVALID = [
        Invalid(
            """\
import torch
from torch.nn.utils.rnn import pack_padded_sequence
lengths = torch.tensor([3, 2], device="cuda")
packed = pack_padded_sequence(x, lengths, batch_first=True)
""",
            line=4,
            fixed="""\
import torch
from torch.nn.utils.rnn import pack_padded_sequence
lengths = torch.tensor([3, 2], device="cuda")
packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True)
""",
        ),
        # handed to a model whose forward packs it unchanged
        Invalid(
            """\
import torch
from torch import nn
class Enc(nn.Module):
    def forward(self, x, lengths):
        return nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True)
model = Enc().cuda()
lens = lengths.cuda().long()
out = model(x.cuda(), lens)
""",
            line=8,
            fixed="""\
import torch
from torch import nn
class Enc(nn.Module):
    def forward(self, x, lengths):
        return nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True)
model = Enc().cuda()
lens = lengths.cuda().long()
out = model(x.cuda(), lens.cpu())
""",
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.qualname(node.func) == PACK:
            arg = get_arg(node, "lengths", 1)
            if arg is not None:
                self._check(arg.value)
            return
        body = body_of(self.ctx)
        if not body.is_forward(node):
            return
        positions, keywords = self._cpu_only_slots(node)
        positional = [a for a in node.args if a.keyword is None and not a.star]
        for arg in node.args:
            if (arg.keyword is not None and arg.keyword.value in keywords) or (
                arg in positional and positional.index(arg) in positions
            ):
                self._check(arg.value)

    def _cpu_only_slots(self, call: cst.Call) -> tuple[set[int], set[str]]:
        """The argument slots of the model's `forward` that go to `pack_padded_sequence` unchanged."""
        built = self.ctx.values.builder(call.func, current_where(self.ctx))
        found = self.ctx.built_classes.of(built[0]) if built is not None else None
        return found.forward_slots_to_cpu_only() if found is not None else (set(), set())

    def _check(self, lengths: cst.BaseExpression) -> None:
        body = body_of(self.ctx)
        index = body.index(lengths)
        move = self._placed(body, lengths, index) if index is not None else None
        if move is None:
            return
        code = self.ctx.module.code_for_node
        text = code(lengths)
        message = self.message.format(lengths=text, move=code(move))
        self.report(lengths, message, fix=self._fix(lengths))

    def _placed(self, body: Body, expr: cst.BaseExpression, index: int, depth: int = 0) -> cst.Call | None:
        """The move or factory call that put the value of `expr` on an accelerator (None: not proven)."""
        if depth > 8:
            return None
        if isinstance(expr, cst.Call):
            moved = move_call(expr, self.ctx.imports)
            if moved is not None:
                return expr if self._accelerator(moved[1]) else None
            func = expr.func
            if isinstance(func, cst.Attribute) and func.attr.value in SAME_DEVICE_METHODS:
                return self._placed(body, func.value, index, depth + 1)
            q = self.ctx.qualname(func) or ""
            device = get_arg(expr, "device")
            if q.startswith("torch.") and q[6:] in TENSOR_FACTORIES and device is not None:
                return expr if self._accelerator(device.value) else None
            return None
        if isinstance(expr, cst.Name):
            d = body.reaching(expr.value, index)
            if d is not None and d.value is not None:
                return self._placed(body, d.value, d.index, depth + 1)
        return None

    def _accelerator(self, device: cst.BaseExpression | None) -> bool:
        """`.cuda()` or a device that is not literally the CPU."""
        if device is None:
            return True
        if isinstance(device, cst.Call) and self.ctx.qualname(device.func) == "torch.device" and device.args:
            device = device.args[0].value
        text = string_value(device)
        if text is not None:
            return text.split(":")[0] not in ("cpu", "meta") and is_device(self.ctx, device)
        return is_device(self.ctx, device)

    def _fix(self, lengths: cst.BaseExpression) -> NodeFix | None:
        if not isinstance(lengths, _FIXABLE):
            return None
        copied = cst.Call(func=cst.Attribute(value=lengths, attr=cst.Name("cpu")))
        return fix("Copy the lengths to the CPU", Replace(lengths, copied), applicability=SAFE)
