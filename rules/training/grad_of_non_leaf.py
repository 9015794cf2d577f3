"""TL109 grad-of-non-leaf: Reading .grad of a non-leaf tensor without retain_grad()"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.context import FileContext
from torchlint.engine.core.analyses import Analysis
from torchlint.engine.core.walk import iter_nodes
from torchlint.engine.flow.graph_flow import Grad, body_of
from torchlint.engine.rule import SAFE, InsertAfter, Invalid, Rule, fix
from torchlint.findings import Severity


class GradOfNonLeaf(Rule):
    code = "TL109"
    analyses = frozenset({Analysis.CALL_SITES, Analysis.GRAPH_BODIES, Analysis.OWN_SUMMARY, Analysis.SCOPES})
    requires = ("grad",)
    name = "grad-of-non-leaf"
    message = "`{name}` is produced by an operation (not a leaf), so `{name}.grad` is None after backward(); call `{name}.retain_grad()` first"
    severity = Severity.ERROR
    category = "correctness"
    summary = "Reading .grad of a non-leaf tensor without retain_grad()"
    what = (
        "Flags a read of `x.grad` where `x` was computed from tensors that require grad (a model "
        "output, `w * 2`, `torch.randn(..., requires_grad=True).cuda()`) and `x.retain_grad()` is "
        "never called."
    )
    why = (
        "Autograd stores `.grad` only on leaf tensors (those created by the user, such as parameters). "
        "For intermediate results it stays `None` — PyTorch only warns when you read it — so the "
        "code prints `None`, or crashes later with `unsupported operand type(s) ... 'NoneType'`. A "
        "common trap: `torch.randn(3, requires_grad=True).cuda()` is the output of `.cuda()`, not a leaf."
    )
    example = """\
import torch

x = torch.randn(3, requires_grad=True)
y = x * 2
y.sum().backward()
print(y.grad)
"""
    fix_example = """\
import torch

x = torch.randn(3, requires_grad=True)
y = x * 2
y.retain_grad()
y.sum().backward()
print(y.grad)
"""
    fix_safety = "Inserts `x.retain_grad()` right after `x` is assigned. Safe; it keeps one extra gradient tensor."
    VALID = [
        """\
import torch
x = torch.randn(3, requires_grad=True)
(x * 2).sum().backward()
print(x.grad)
""",
        """\
import torch
x = torch.randn(3, requires_grad=True)
y = x * 2
y.retain_grad()
y.sum().backward()
print(y.grad)
""",
        # detached and made a leaf again (adversarial examples)
        """\
import torch
delta = (images + 0.1 * torch.randn_like(images)).detach().requires_grad_(True)
criterion(model(delta), labels).backward()
step = delta.grad.sign()
""",
        """\
import torch
w = torch.nn.Parameter(torch.randn(3, 3))
(w @ w).sum().backward()
print(w.grad)
""",
        # checking for None is the point
        """\
out = model(x)
out.sum().backward()
if out.grad is None:
    print("no grad")
""",
    ]
    INVALID = [
        Invalid(
            """\
import torch
w = torch.randn(3, 3, requires_grad=True).cuda()
loss = (w @ w).sum()
loss.backward()
w -= 0.1 * w.grad
""",
            line=5,
            fixed="""\
import torch
w = torch.randn(3, 3, requires_grad=True).cuda()
w.retain_grad()
loss = (w @ w).sum()
loss.backward()
w -= 0.1 * w.grad
""",
        ),
        Invalid(
            """\
import torch
criterion = torch.nn.CrossEntropyLoss()
def saliency(model: torch.nn.Module, image, label):
    logits = model(image)
    criterion(logits, label).backward()
    return logits.grad.abs()
""",
            line=6,
            fixed="""\
import torch
criterion = torch.nn.CrossEntropyLoss()
def saliency(model: torch.nn.Module, image, label):
    logits = model(image)
    logits.retain_grad()
    criterion(logits, label).backward()
    return logits.grad.abs()
""",
        ),
    ]

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self._skip: set[cst.CSTNode] = set()

    def visit_Assign(self, node: cst.Assign) -> None:
        self._skip.update(t.target for t in node.targets)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._skip.add(node.target)

    def visit_Del(self, node: cst.Del) -> None:
        self._skip.update(iter_nodes(node))

    def visit_Comparison(self, node: cst.Comparison) -> None:
        # `x.grad is None`: the code expects None
        if any(isinstance(c.comparator, cst.Name) and c.comparator.value == "None" for c in node.comparisons):
            self._skip.add(node.left)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value != "grad" or not isinstance(node.value, cst.Name) or node in self._skip:
            return
        name = node.value.value
        body = body_of(self.ctx)
        index = body.index(node)
        if index is None or name in body.retained:
            return
        if body.grad_status(node.value, index) is not Grad.NON_LEAF:
            return
        d = body.reaching(name, index)
        edit = None
        if d is not None and isinstance(d.stmt, cst.SimpleStatementLine):
            edit = fix(
                f"Call `{name}.retain_grad()` after `{name}` is computed",
                InsertAfter(d.stmt, f"{name}.retain_grad()"),
                applicability=SAFE,
            )
        self.report(node, self.message.format(name=name), fix=edit)
