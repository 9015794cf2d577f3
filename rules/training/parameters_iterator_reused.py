"""TL121 parameters-iterator-reused: a model.parameters() generator iterated twice"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.core.walk import block_statements, iter_nodes
from torchlint.engine.flow.blocks import BranchPath, Place, headers, statements
from torchlint.engine.flow.loop_events import exclusive
from torchlint.engine.rule import SAFE, Invalid, Replace, Rule, fix
from torchlint.engine.semantic.kinds import CLIP_GRAD, ITERATING_BUILTINS, MODULE_GENERATORS, Kind
from torchlint.engine.semantic.names import target_names
from torchlint.findings import Severity


@dataclass(frozen=True)
class Pass:
    """A use that runs through the iterator: `passes` is 2 when it does so more than once (in a loop the
    binding is not in, or a function that iterates its argument twice)."""

    node: cst.CSTNode
    passes: int
    path: BranchPath
    text: str


class ParametersIteratorReused(Rule):
    code = "TL121"
    analyses = frozenset({Analysis.CALL_SITES, Analysis.KINDS, Analysis.OWN_SUMMARY, Analysis.SCOPES})
    requires = ("parameters", "buffers", "children", "modules")
    name = "parameters-iterator-reused"
    message = (
        "`{name}` is the generator `{value}`: {first} runs through it, so {second} sees no parameters; "
        "bind `list({value})`"
    )
    helper_message = (
        "`{function}` runs through its argument `{name}` twice, and `{value}` is a generator: the second pass "
        "sees no parameters; pass `list({value})`"
    )
    severity = Severity.WARNING
    category = "correctness"
    summary = "A model.parameters() generator bound once and iterated twice: the second pass sees nothing"
    what = (
        "Flags a name bound to `model.parameters()` (or `named_parameters()`, `buffers()`, `modules()` ...) and "
        "then run through twice: two loops, a loop then `clip_grad_norm_(params, ...)`, an optimizer built from "
        "it and a clip, one use inside a loop the binding is outside of, or a function of this file that "
        "iterates its argument twice (`grad_clipping(model.parameters(), theta)`)."
    )
    why = (
        "`parameters()` returns a generator: the first pass exhausts it and every later one iterates "
        "nothing. `clip_grad_norm_` then clips no gradient (torch only warns that the generator is empty and "
        'returns a norm of 0), an optimizer built from the spent generator raises "optimizer got an empty '
        'parameter list", and a hand-written clip computes the norm but never scales.'
    )
    example = """\
import torch
from torch import nn

model = nn.Linear(8, 2)
params = model.parameters()
optimizer = torch.optim.SGD(params, lr=0.1)
for x, y in loader:
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    nn.utils.clip_grad_norm_(params, 1.0)
    optimizer.step()
"""
    fix_example = """\
import torch
from torch import nn

model = nn.Linear(8, 2)
params = list(model.parameters())
optimizer = torch.optim.SGD(params, lr=0.1)
for x, y in loader:
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    nn.utils.clip_grad_norm_(params, 1.0)
    optimizer.step()
"""
    fix_safety = "Safe: a list holds the same parameters, in the same order, and can be iterated any number of times."
    VALID = [
        # a list
        """\
from torch import nn
model = nn.Linear(4, 2)
params = list(model.parameters())
for p in params:
    p.requires_grad_(False)
nn.utils.clip_grad_norm_(params, 1.0)
""",
        # one pass
        """\
import torch
from torch import nn
model = nn.Linear(4, 2)
params = model.parameters()
optimizer = torch.optim.Adam(params)
""",
        # two passes in exclusive branches
        """\
import torch
from torch import nn
model = nn.Linear(4, 2)
params = model.parameters()
if freeze:
    for p in params:
        p.requires_grad_(False)
else:
    optimizer = torch.optim.Adam(params)
""",
        # rebound before the second pass
        """\
from torch import nn
model = nn.Linear(4, 2)
params = model.parameters()
n = sum(p.numel() for p in params)
params = model.parameters()
nn.utils.clip_grad_norm_(params, 1.0)
""",
        # a helper that iterates its argument once
        """\
from torch import nn
def clip(params, limit):
    for p in params:
        p.grad.clamp_(-limit, limit)
model = nn.Linear(4, 2)
clip(model.parameters(), 1.0)
""",
    ]
    INVALID = [
        Invalid(
            """\
from torch import nn
model = nn.Linear(4, 2)
params = model.parameters()
total = sum(p.numel() for p in params)
nn.utils.clip_grad_norm_(params, max_norm=1.0)
""",
            line=5,
            fixed="""\
from torch import nn
model = nn.Linear(4, 2)
params = list(model.parameters())
total = sum(p.numel() for p in params)
nn.utils.clip_grad_norm_(params, max_norm=1.0)
""",
        ),
        # one use, but in every step of a loop the binding is outside of
        Invalid(
            """\
from torch import nn
model = nn.Linear(4, 2)
params = model.parameters()
for x in loader:
    model(x).sum().backward()
    nn.utils.clip_grad_value_(params, 0.5)
""",
            line=6,
            fixed="""\
from torch import nn
model = nn.Linear(4, 2)
params = list(model.parameters())
for x in loader:
    model(x).sum().backward()
    nn.utils.clip_grad_value_(params, 0.5)
""",
        ),
        # a helper that iterates its argument twice
        Invalid(
            """\
import torch
from torch import nn
def grad_clipping(params, theta):
    norm = torch.sqrt(sum(torch.sum(p.grad ** 2) for p in params))
    if norm > theta:
        for p in params:
            p.grad[:] *= theta / norm
model = nn.Linear(4, 2)
grad_clipping(model.parameters(), 1)
""",
            line=9,
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        """`helper(model.parameters())` where the helper runs through its argument twice."""
        if not isinstance(node.func, cst.Name) or not any(self._generator(a.value) for a in node.args):
            return
        fn = self._local_function(node.func.value)
        if fn is None:
            return
        positional = [*fn.params.posonly_params, *fn.params.params]
        for i, arg in enumerate(node.args):
            if arg.star or not self._generator(arg.value):
                continue
            param = next((p for p in positional if p.name.value == arg.keyword.value), None) if arg.keyword else None
            if param is None and arg.keyword is None and i < len(positional):
                param = positional[i]
            if param is not None and self._passes_in(fn, param.name.value) >= 2:
                code = self.ctx.module.code_for_node
                message = self.helper_message.format(
                    function=fn.name.value, name=param.name.value, value=code(arg.value)
                )
                self.report(node, message)

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Name):
            return
        if not self._generator(node.value) or self.ctx.statement is None:
            return
        name = node.targets[0].target.value
        passes = _after(self, self.ctx.body_statements, self.ctx.statement, name)
        for i, second in enumerate(passes):
            earlier = [p for p in passes[:i] if not exclusive(p, second)]
            if second.passes < 2 and not earlier:
                continue
            code = self.ctx.module.code_for_node
            first = earlier[0].text if earlier else f"{second.text} (in every iteration)"
            message = self.message.format(name=name, value=code(node.value), first=first, second=second.text)
            value = cst.Call(func=cst.Name("list"), args=[cst.Arg(node.value)])
            edit = fix(f"Bind `list({code(node.value)})`", Replace(node.value, value), applicability=SAFE)
            self.report(second.node, message, fix=edit if self.ctx.builtin(cst.Name("list")) else None)
            return

    def _generator(self, expr: cst.BaseExpression) -> bool:
        """`model.parameters()` and the like, on a value proven to be a module."""
        if type(expr) is not cst.Call or type(expr.func) is not cst.Attribute or expr.args:
            return False
        if expr.func.attr.value not in MODULE_GENERATORS:
            return False
        receiver = expr.func.value
        if isinstance(receiver, cst.Name) and receiver.value == "self":
            return self.ctx.in_module_class
        return bool(self.ctx.kind(receiver) & Kind.MODEL)

    def _local_function(self, name: str) -> cst.FunctionDef | None:
        defs = self.ctx.semantics.functions().get(name, ())
        return defs[0][0] if len(defs) == 1 and not defs[0][1] else None

    def _passes_in(self, fn: cst.FunctionDef, name: str) -> int:
        """How many times `fn` runs through its parameter `name` (before rebinding it)."""
        found = _after(self, block_statements(fn.body), None, name, nested=False)
        total = 0
        for i, p in enumerate(found):
            total = max(total, p.passes + sum(q.passes for q in found[:i] if not exclusive(q, p)))
        return total


def _after(
    rule: ParametersIteratorReused,
    body: Sequence[cst.BaseStatement],
    binding: cst.BaseStatement | None,
    name: str,
    nested: bool = True,
) -> list[Pass]:
    """The passes over `name` after `binding` (None: from the start), until it is bound again."""
    placed = list(statements(body))
    start: Place | None = None
    if binding is not None:
        at = next((i for i, (s, _) in enumerate(placed) if s is binding), None)
        if at is None:
            return []
        start = placed[at][1]
        placed = placed[at + 1 :]
    loops = start.loops if start is not None else ()
    found: list[Pass] = []
    for stmt, place in placed:
        nodes = (
            [n for small in stmt.body for n in (small, *iter_nodes(small, into_functions=False))]
            if isinstance(stmt, cst.SimpleStatementLine)
            else [n for h in headers(stmt) for n in (h, *iter_nodes(h, into_functions=False))]
        )
        in_loop = any(loop not in loops for loop in place.loops)
        for node in nodes:
            passes = _iterates(rule, node, name, nested)
            if isinstance(stmt, cst.For) and node is stmt.iter and _is(stmt.iter, name):
                passes = 1
            if passes:
                passes = 2 if in_loop else passes
                found.append(Pass(node, passes, place.path, f"`{rule.ctx.module.code_for_node(node).strip()}`"))
        if _rebinds(stmt, name):
            break
    return found


def _iterates(rule: ParametersIteratorReused, node: cst.CSTNode, name: str, nested: bool) -> int:
    """How many passes `node` makes over `name`: a comprehension over it, or a call that runs through it."""
    if isinstance(node, cst.CompFor):
        return 1 if _is(node.iter, name) else 0
    if not isinstance(node, cst.Call):
        return 0
    arg = next((a for a in node.args if _is(a.value, name) and not a.star), None)
    if arg is None:
        return 0
    func = node.func
    builtin = rule.ctx.builtin(func)
    if builtin in ITERATING_BUILTINS:
        return 1
    q = rule.ctx.qualname(func) or ""
    if q in CLIP_GRAD or rule.ctx.kind(node) & Kind.OPTIMIZER:
        return 1
    if nested and isinstance(func, cst.Name):
        fn = rule._local_function(func.value)
        params = [*fn.params.posonly_params, *fn.params.params] if fn is not None else []
        index = node.args.index(arg)
        if fn is not None and arg.keyword is None and index < len(params):
            return rule._passes_in(fn, params[index].name.value)
    return 0


def _is(expr: cst.BaseExpression, name: str) -> bool:
    return isinstance(expr, cst.Name) and expr.value == name


def _rebinds(stmt: cst.BaseStatement, name: str) -> bool:
    if isinstance(stmt, cst.For):
        return name in target_names(stmt.target)
    for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
        targets = (
            [t.target for t in small.targets]
            if isinstance(small, cst.Assign)
            else [small.target]
            if isinstance(small, (cst.AnnAssign, cst.AugAssign))
            else []
        )
        if any(name in target_names(t) for t in targets):
            return True
    return False
