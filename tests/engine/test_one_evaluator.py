"""One evaluator of kinds (issue 25, item 1): only inference.py says what an expression is.

`ctx.kind(expr)` hands the linted file's libcst expression to inference.py in its `ast` shape (as_ast.py);
no other engine module reads the tables that say what a call or method returns. The sample below makes
each branch of the evaluator answer (names, `self.x`, `.module`, `.loss`, library and project calls,
pass-through wrappers, classes and functions of the file, `self` methods, accelerator `prepare`, models
and criteria called, operators, constants, containers, subscripts, element kinds): the libcst side and
CPython's own tree of the same line must agree, and both must give the kind written on the line.
"""

from __future__ import annotations

import ast
from pathlib import Path

import libcst as cst
import pytest

from torchlint.engine.context import FileContext
from torchlint.engine.core.walk import iter_statements
from torchlint.engine.semantic.inference import own_statements
from torchlint.engine.semantic.kinds import Kind

ENGINE = Path(__file__).resolve().parents[2] / "server" / "torchlint" / "engine"
# The tables that say what a call, method or builtin returns: the evaluator's alone.
EVALUATION_TABLES = {"method_call_kind", "builtin_call_kind", "kind_from_qualname", "PASS_THROUGH", "RETURNS"}

SAMPLE = """\
import copy

import torch
from accelerate import Accelerator
from torch import nn
from torch.utils.data import DataLoader


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)  # MODEL
        self.criterion = nn.MSELoss()  # CRITERION

    def features(self, x):
        return self.fc(x)

    def forward(self, x):
        h = self.features(x)  # TENSOR
        fc = self.fc  # MODEL
        other = self.nothing  # NONE
        return h


def build():
    return Net()


def train(data):
    accelerator = Accelerator()  # ACCELERATOR
    loader = DataLoader(data)  # DATALOADER
    net = Net()  # MODEL
    model = build()  # MODEL
    compiled = torch.compile(net)  # MODEL
    copied = copy.deepcopy(model)  # MODEL
    prepared = accelerator.prepare(net)  # MODEL
    wrapped = nn.DataParallel(net)  # MODEL|WRAPPED
    bare = wrapped.module  # MODEL
    moved = net.to("cpu")  # MODEL
    criterion = nn.CrossEntropyLoss()  # CRITERION
    opt = torch.optim.SGD(net.parameters(), lr=0.1)  # OPTIMIZER
    count = len(data)  # NUMBER
    x = torch.randn(4, 2)  # TENSOR
    out = model(x)  # TENSOR
    loss = criterion(out, x)  # LOSS
    total = loss + 1  # LOSS
    half = out * 0.5  # TENSOR
    step = 3 // 2  # NUMBER
    first = out[0]  # TENSOR
    value = loss.item()  # NUMBER
    detached = out.detach()  # TENSOR
    hf = model(x).loss  # LOSS
    pair = (out, x)  # CONTAINER
    table = {"a": out}  # CONTAINER
    squares = [v * v for v in range(3)]  # CONTAINER
    name = "net"  # NONE
    flag = out > 0  # NONE
    for batch in loader:
        seen = batch  # BATCH
        part = batch[0]  # BATCH
    return net
"""
# sum(...) arguments: what each element of it is (Semantics.element_kind)
ELEMENTS = """\
import torch
from torch import nn


def f(xs):
    model = nn.Linear(2, 2)
    a = torch.ones(2)
    losses = []
    losses.append(a.sum())
    mixed = []
    mixed.append(a)
    mixed.append(1)
    made = [p for p in model.parameters()]
    sum(p.sum() for p in model.parameters())  # TENSOR
    sum([a, a * 2])  # TENSOR
    sum(losses)  # TENSOR
    sum(made)  # TENSOR
    sum(x * a for x in xs)  # TENSOR
    sum(mixed)  # NONE
    sum(x for x in xs)  # NONE
    sum([a, 1])  # NONE
"""


def _context(text: str) -> FileContext:
    return FileContext("sample.py", text, cst.parse_module(text))


def _expected(line: cst.SimpleStatementLine) -> Kind | None:
    comment = line.trailing_whitespace.comment
    if comment is None:
        return None
    kind = Kind.NONE
    for name in comment.value.lstrip("# ").split("|"):
        kind |= Kind[name]
    return kind


def _scopes(ctx: FileContext) -> list[tuple[cst.CSTNode, list[cst.CSTNode]]]:
    """Each scope of statements of the libcst tree with its own statements, module first."""
    own = [(ctx.module, list(iter_statements(ctx.module.body, into_functions=False)))]
    for fn in iter_statements(ctx.module.body, into_functions=True):
        if isinstance(fn, cst.FunctionDef):
            own.append((fn, list(iter_statements(fn.body.body))))  # type: ignore[arg-type]
    return own


def _lines(statements: list[cst.CSTNode]) -> list[cst.SimpleStatementLine]:
    return [s for s in statements if isinstance(s, cst.SimpleStatementLine)]


def test_ctx_kind_is_inferences_answer_for_every_branch():
    ctx = _context(SAMPLE)
    inference = ctx.semantics.inference
    checked = set()
    for node, statements in _scopes(ctx):
        scope = ctx.semantics.scope_at(node)
        ctx.scope = scope
        target = scope.target
        assert target is not None, "each def of the sample pairs with CPython's"
        theirs = [s for s in own_statements(target.body) if isinstance(s, ast.Assign)]
        mine = [line for line in _lines(statements) if isinstance(line.body[0], cst.Assign)]
        assert len(mine) == len(theirs)
        for line, assign in zip(mine, theirs, strict=True):
            expected = _expected(line)
            if expected is None:
                continue
            value = line.body[0].value  # type: ignore[attr-defined]
            asked = ctx.kind(value)
            assert asked == inference.infer(assign.value, target), ctx.module.code_for_node(line)
            assert asked == expected, ctx.module.code_for_node(line)
            checked.add(expected)
    assert len(checked) >= 10, "the sample exercises most kinds"


def test_element_kinds_are_inferences_answer():
    ctx = _context(ELEMENTS)
    fn = next(s for s in iter_statements(ctx.module.body, into_functions=True) if isinstance(s, cst.FunctionDef))
    scope = ctx.semantics.scope_at(fn)
    answers = []
    for line in _lines(list(iter_statements(fn.body.body))):  # type: ignore[arg-type]
        expected = _expected(line)
        call = line.body[0].value  # type: ignore[attr-defined]
        if expected is None or not isinstance(call, cst.Call):
            continue
        answers.append((ctx.module.code_for_node(line).strip(), ctx.semantics.element_kind(call.args[0].value, scope)))
        assert answers[-1][1] == expected, answers[-1][0]
    assert len(answers) == 8


@pytest.mark.parametrize(
    "module", sorted(p for p in ENGINE.rglob("*.py") if p.name not in ("inference.py", "kinds.py"))
)
def test_no_engine_module_but_inference_evaluates_kinds(module: Path):
    """The tables that say what a call returns are read by inference.py's evaluator alone (kinds.py holds
    them): a second evaluator of kinds, such as semantics.py's over libcst, would have to read them."""
    tree = ast.parse(module.read_text(encoding="utf-8"))
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    names |= {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
    names |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    allowed = {"PASS_THROUGH"} if module.name == "values.py" else set()  # which call built a value: not a kind
    assert not (names & EVALUATION_TABLES) - allowed, module.relative_to(ENGINE)
