"""Engine facts TL116 and TL117 stand on: which models an optimizer updates (optimizer_params), which
functions only run with autograd off (no_grad_callers), and loop events of a helper called twice."""

from __future__ import annotations

import libcst as cst
import pytest

from torchlint.engine.context import FileContext
from torchlint.engine.core.walk import iter_nodes
from torchlint.engine.flow.loop_events import EventKind
from torchlint.engine.flow.no_grad_callers import runs_without_grad
from torchlint.engine.torch.optimizer_params import optimized_models


def _ctx(src: str) -> FileContext:
    return FileContext("snippet.py", src, cst.parse_module(src))


def _function(ctx: FileContext, name: str) -> cst.FunctionDef:
    return next(n for n in iter_nodes(ctx.module) if isinstance(n, cst.FunctionDef) and n.name.value == name)


@pytest.mark.parametrize(
    "built,models",
    [
        ("torch.optim.Adam(G.parameters(), lr=1e-3)", {"G"}),
        ("torch.optim.Adam(params=D.parameters())", {"D"}),
        ("torch.optim.Adam(itertools.chain(G.parameters(), E.parameters()))", {"G", "E"}),
        ("torch.optim.AdamW([{'params': G.parameters()}, {'params': D.parameters(), 'lr': 1e-4}])", {"G", "D"}),
        ("torch.optim.Adam(chain)", {"G", "E"}),  # followed to the name's value
        ("torch.optim.Adam(weights)", set()),  # a parameter list built out of sight
        ("make_optimizer()", set()),
    ],
)
def test_optimized_models(built, models):
    src = f"import itertools\nimport torch\nchain = itertools.chain(G.parameters(), E.parameters())\nopt = {built}\nopt.step()\n"
    ctx = _ctx(src)
    use = next(
        n for n in iter_nodes(ctx.module) if isinstance(n, cst.Call) and cst.Module([]).code_for_node(n) == "opt.step()"
    )
    assert isinstance(use.func, cst.Attribute)
    assert optimized_models(ctx, use.func.value) == models


_CALLERS = """\
import torch

@torch.no_grad()
def decorated():
    pass

def under_with():
    pass

def through_caller():
    pass

def evaluate():
    through_caller()

def mixed():
    pass

def handed_over():
    pass

def never_called():
    pass

def main():
    with torch.no_grad():
        under_with()
        evaluate()
        mixed()
        handed_over()
    mixed()
    register(handed_over)

class Trainer:
    def sample(self):
        pass

    def run(self):
        with torch.inference_mode():
            self.sample()
"""


@pytest.mark.parametrize(
    "name,expected",
    [
        ("decorated", True),
        ("under_with", True),
        ("through_caller", True),
        ("evaluate", True),
        ("sample", True),
        ("mixed", False),
        ("handed_over", False),
        ("never_called", False),
        ("main", False),
    ],
)
def test_runs_without_grad(name, expected):
    ctx = _ctx(_CALLERS)
    assert runs_without_grad(ctx, _function(ctx, name)) is expected


def test_a_helper_called_twice_in_an_iteration_gives_its_events_twice():
    src = (
        "import torch\n"
        "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "def reset():\n"
        "    opt.zero_grad()\n"
        "for x in loader:\n"
        "    reset()\n"
        "    model(x).sum().backward()\n"
        "    reset()\n"
    )
    ctx = _ctx(src)
    ctx.scope = ctx.semantics.scope_for(ctx.module, None)
    loop = next(n for n in iter_nodes(ctx.module) if isinstance(n, cst.For))
    kinds = [e.kind for e in ctx.loop_analysis.events(loop)]
    assert kinds == [EventKind.ZERO_GRAD, EventKind.BACKWARD, EventKind.ZERO_GRAD]
