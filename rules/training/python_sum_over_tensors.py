"""TL106 python-sum-over-tensors: Builtin sum() over a list of tensors"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.rule import UNSAFE, Invalid, Replace, Rule, fix
from torchlint.engine.semantic.kinds import Kind
from torchlint.findings import Severity


class PythonSumOverTensors(Rule):
    code = "TL106"
    analyses = frozenset({Analysis.CALL_SITES, Analysis.LOCAL_FUNCTIONS, Analysis.OWN_SUMMARY, Analysis.SCOPES})
    requires = ("sum",)
    name = "python-sum-over-tensors"
    message = "builtin `sum()` over tensors adds them one by one starting from the int 0; use `torch.stack(...).sum(0)`"
    severity = Severity.INFO
    category = "performance"
    opt_in = (
        "Measured on 25 public repositories it was not tuned on (bench/realworld, unseen at 2026-12-03 and "
        "2026-12-04), 0 of its 3 findings were right (3 debatable): Python `sum()` over a handful of "
        "per-layer or weighted loss terms once per step, where the extra kernels cost nothing that matters. "
        "Select it for sums over many tensors in a hot loop."
    )
    summary = "Builtin sum() over a list of tensors"
    what = (
        "Flags the builtin `sum()` applied to a list, tuple or generator whose elements are tensors "
        "(losses, model outputs, parameter norms). Sums of Python numbers are not flagged."
    )
    why = (
        "`sum(xs)` computes `((0 + x0) + x1) + ...`: one kernel launch and one autograd node per "
        "element, plus a Python-int-to-tensor promotion at the start. `torch.stack(xs).sum()` is one "
        "stack and one reduction — a single node in the graph and much faster backward for long lists."
    )
    example = """\
import torch

heads = [torch.nn.Linear(8, 2) for _ in range(3)]
criterion = torch.nn.CrossEntropyLoss()
losses = [criterion(head(x), y) for head in heads]
loss = sum(losses)
"""
    fix_example = """\
import torch

heads = [torch.nn.Linear(8, 2) for _ in range(3)]
criterion = torch.nn.CrossEntropyLoss()
losses = [criterion(head(x), y) for head in heads]
loss = torch.stack(losses).sum(0)
"""
    fix_safety = (
        "Unsafe: `torch.stack(xs).sum(0)` adds the elements one by one as `sum` does, keeping their shape "
        "(per-sample losses stay per sample); `.sum()` only where every element is a full reduction "
        "(`x.sum()`, `x.mean()`). Equivalent when the elements are tensors of one shape on one device, but it differs "
        "when the list may be empty (`sum` returns 0, `torch.stack` raises) or when shapes differ and "
        "`sum` relied on broadcasting; check those cases before applying."
    )
    VALID = [
        "total = sum(loss.item() for loss in losses)\n",
        "n_params = sum(p.numel() for p in model.parameters())\n",
        """\
import torch
losses = [criterion(head(x), y) for head in heads]
loss = torch.stack(losses).sum()
""",
        # a start value: not a chain from int 0
        """\
import torch
loss = sum((criterion(h(x), y) for h in heads), torch.tensor(0.0))
""",
        """\
scores = []
for x in xs:
    scores.append(float(model(x)))
print(sum(scores))
""",
    ]
    INVALID = [
        Invalid(
            """\
import torch
model = torch.nn.Linear(4, 2)
reg = sum(p.pow(2).sum() for p in model.parameters())
""",
            line=3,
            fixed="""\
import torch
model = torch.nn.Linear(4, 2)
reg = torch.stack([p.pow(2).sum() for p in model.parameters()]).sum()
""",
        ),
        Invalid(
            """\
import torch
model = torch.nn.Linear(4, 2)
criterion = torch.nn.MSELoss()
losses = []
for x, y in batches:
    losses.append(criterion(model(x), y))
total = sum(losses)
""",
            line=7,
            fixed="""\
import torch
model = torch.nn.Linear(4, 2)
criterion = torch.nn.MSELoss()
losses = []
for x, y in batches:
    losses.append(criterion(model(x), y))
total = torch.stack(losses).sum(0)
""",
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Name) and func.value == "sum") or len(node.args) != 1:
            return
        arg = node.args[0]
        ctx = self.ctx
        if arg.keyword is not None or arg.star or ctx.qualname(func) is not None or ctx.scope is None:
            return
        if ctx.scope.lookup("sum") is not None or "sum" in ctx.local_functions():
            return
        kind = ctx.semantics.element_kind(arg.value, ctx.scope)
        if not kind & Kind.TENSOR:
            return
        edit = None
        if ctx.imports.table.get("torch") == "torch":
            elements = arg.value
            if isinstance(elements, cst.GeneratorExp):
                elements = cst.ListComp(elt=elements.elt, for_in=elements.for_in)
            reduce = "sum()" if _scalar(arg.value) else "sum(0)"
            edit = fix(
                f"Use `torch.stack(...).{reduce}`",
                Replace(node, f"torch.stack({ctx.module.code_for_node(elements)}).{reduce}"),
                applicability=UNSAFE,
                risk="raises on an empty list or broadcast shapes",
            )
        self.report(node, fix=edit)


def _scalar(elements: cst.BaseExpression) -> bool:
    """Every element is a full reduction (`x.sum()`, `x.mean()`): 0-dim, so `.sum()` of the stack is
    their sum. Otherwise (per-sample losses, `reduction="none"`) only `.sum(0)` keeps `sum`'s shape."""
    elt = elements.elt if isinstance(elements, (cst.GeneratorExp, cst.ListComp)) else None
    return (
        isinstance(elt, cst.Call)
        and not elt.args
        and isinstance(elt.func, cst.Attribute)
        and elt.func.attr.value in ("sum", "mean")
    )
