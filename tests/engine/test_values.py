"""values.py: which expression a name or `self.attr` holds at a use, in source order."""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.walk import iter_nodes
from torchlint.engine.semantic.names import Imports
from torchlint.engine.semantic.values import UNKNOWN, Values, Where, reaching


def _use(module: cst.Module, marker: str) -> cst.Call:
    """The call `marker(...)` in the module: its first argument is the use asked about."""
    return next(
        n for n in iter_nodes(module) if isinstance(n, cst.Call) and cst.Module([]).code_for_node(n.func) == marker
    )


def _code(expr: object) -> str:
    assert isinstance(expr, cst.CSTNode)
    return cst.Module([]).code_for_node(expr)


def test_the_assignment_that_reaches_the_use_wins():
    m = cst.parse_module("def f(x):\n    y = a(x)\n    y = b(y)\n    use(y)\n    y = c(y)\n")
    fn = m.body[0]
    assert isinstance(fn, cst.FunctionDef)
    arg = _use(m, "use").args[0].value
    assert _code(reaching(fn, "y", arg)) == "b(y)"


def test_an_assignment_under_a_condition_the_use_is_not_under_is_unknown():
    m = cst.parse_module("def f(x):\n    y = a(x)\n    if x:\n        y = b(y)\n    use(y)\n")
    fn = m.body[0]
    assert isinstance(fn, cst.FunctionDef)
    assert reaching(fn, "y", _use(m, "use").args[0].value) is UNKNOWN


def test_inside_the_same_loop_body_the_assignment_reaches():
    m = cst.parse_module("def f(xs):\n    for x in xs:\n        y = a(x)\n        use(y)\n")
    fn = m.body[0]
    assert isinstance(fn, cst.FunctionDef)
    assert _code(reaching(fn, "y", _use(m, "use").args[0].value)) == "a(x)"
    assert reaching(fn, "x", _use(m, "a").args[0].value) is UNKNOWN  # a loop target
    assert reaching(fn, "xs", m) is UNKNOWN  # a parameter (and a use not in the body)


def test_tuple_assignments_pair_up_elements():
    m = cst.parse_module("def f():\n    a, b = Net(), Other()\n    c, d = pair()\n    use(b, d)\n")
    fn = m.body[0]
    assert isinstance(fn, cst.FunctionDef)
    call = _use(m, "use")
    assert _code(reaching(fn, "b", call.args[0].value)) == "Other()"
    assert _code(reaching(fn, "d", call.args[1].value)) == "pair()[1]"  # an element of what `pair()` returns


def test_builder_sees_through_moves_wrappers_and_module_level_names():
    src = (
        "import torch\n"
        "model = torch.compile(Net().to('cuda'))\n"
        "class Head(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        self.loss = torch.nn.CrossEntropyLoss()\n"
        "    def forward(self, x):\n"
        "        return use(model, self.loss)\n"
    )
    m = cst.parse_module(src)
    values = Values(m, Imports(m))
    cls = m.body[2]
    assert isinstance(cls, cst.ClassDef)
    forward = cls.body.body[1]
    assert isinstance(forward, cst.FunctionDef)
    call = _use(m, "use")
    built = values.builder(call.args[0].value, Where(forward, cls))
    assert built is not None and _code(built[0]) == "Net()"
    built = values.builder(call.args[1].value, Where(forward, cls))
    assert built is not None and _code(built[0]) == "torch.nn.CrossEntropyLoss()"
    assert values.builder(call.args[1].value, Where(forward, None)) is None  # no class: `self` unknown


def test_a_module_name_assigned_twice_is_unknown_inside_functions():
    m = cst.parse_module("model = A()\nmodel = B()\ndef f():\n    use(model)\n")
    fn = m.body[2]
    assert isinstance(fn, cst.FunctionDef)
    assert Values(m, Imports(m)).builder(_use(m, "use").args[0].value, Where(fn)) is None


def test_a_parameter_is_what_the_one_call_passes():
    src = "def train(model, loader):\n    use(model)\ndef main():\n    net = Net().cuda()\n    train(net, None)\n"
    m = cst.parse_module(src)
    fn = m.body[0]
    assert isinstance(fn, cst.FunctionDef)
    values = Values(m, Imports(m))
    built = values.builder(_use(m, "use").args[0].value, Where(fn))
    assert built is not None and _code(built[0]) == "Net()"
    module = cst.parse_module(src + "train(Other(), None)\n")
    fn2 = module.body[0]
    assert isinstance(fn2, cst.FunctionDef)
    twice = Values(module, Imports(module))
    assert twice.builder(_use(module, "use").args[0].value, Where(fn2)) is None  # two callers: unknown
