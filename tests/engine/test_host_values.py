"""Use-based host values (host_values.py): a tensor used only as a Python index, slice bound, size or loop
bound is a host value, whatever its name; any other use makes it a device operand."""

from __future__ import annotations

import libcst as cst
import pytest

from torchlint.engine.context import FileContext

CODE = """\
import torch

def forward(self, x, feats):
    ends = torch.cumsum(torch.tensor([f.shape[-1] for f in feats]), 0)
    start = 0
    for end in ends:
        x = x[start:end]
        start = end
    off = torch.tensor(3)
    s = torch.tensor(2)
    y = x[:, off:off + s]
    n = torch.tensor(5)
    for i in range(int(n)):
        pass
    k = torch.tensor(4)
    total = k.item() + len(feats)
    rows = torch.arange(4)
    picked = x[rows]
    mask = torch.ones(4)
    out = x * mask
    ret = torch.zeros(2)
    both = torch.tensor(1)
    z = x[both] + both
    later = torch.tensor(1)
    fn = lambda: later
    unused = torch.tensor(0)
    return out, ret, y, picked, z, fn
"""


@pytest.mark.parametrize(
    "name,host",
    [
        ("ends", True),  # iterated; each element a slice bound, through `start = end` too
        ("end", True),
        ("start", True),
        ("off", True),  # a slice bound, also in arithmetic inside the bound
        ("s", True),
        ("n", True),  # int() for range()
        ("k", True),  # .item()
        ("rows", True),  # an index
        ("mask", False),  # an operand of x * mask
        ("ret", False),  # returned
        ("both", False),  # an index and an operand
        ("later", False),  # read in a lambda: runs elsewhere
        ("unused", False),  # no use at all proves nothing
    ],
)
def test_host_only(name, host):
    ctx = FileContext("m.py", CODE, cst.parse_module(CODE))
    (fn,) = [f for f, _ in ctx.call_sites.functions["forward"]]
    assert ctx.host_values.host_only(fn, name) is host


def test_a_rebound_builtin_is_not_a_host_use():
    code = "import torch\ndef f(x):\n    int = torch.nn.Linear(2, 2)\n    t = torch.ones(2)\n    return int(t)\n"
    ctx = FileContext("m.py", code, cst.parse_module(code))
    (fn,) = [f for f, _ in ctx.call_sites.functions["f"]]
    assert not ctx.host_values.host_only(fn, "t")


VALUE_CODE = """\
import torch

def forward(self, inputs, x):
    crops = torch.cumsum(torch.unique_consecutive(torch.tensor([i.shape[-1] for i in inputs]), return_counts=True)[1], 0)
    start = 0
    for end in crops:
        out = x[start:end]
        if start == 0:
            first = out
        start = end
    mixed = torch.cumsum(torch.tensor([1, 2]), 0) + x
    other = torch.add(torch.tensor([1, 2]), x)
    compared = torch.tensor([1]) == x
    return out, mixed, other, compared
"""


def test_a_value_derived_by_torch_functions_into_slice_bounds_is_host_only():
    ctx = FileContext("m.py", VALUE_CODE, cst.parse_module(VALUE_CODE))
    (fn,) = [f for f, _ in ctx.call_sites.functions["forward"]]
    tensors = [s.call for s in ctx.call_sites.calls if ctx.qualname(s.call.func) == "torch.tensor"]
    # through unique_consecutive(...)[1], cumsum(..., 0), the loop and `if start == 0:`: only Python bounds;
    # the others meet `x` (arithmetic, a torch function of two tensors, a comparison with a tensor)
    assert [ctx.host_values.host_only_value(fn, t) for t in tensors] == [True, False, False, False]


METHOD_CODE = """\
import torch

def forward(self, x):
    rows = torch.arange(x.shape[0])[..., None]
    scores = torch.randn(x.shape[0], x.shape[1])
    keep = scores.topk(x.shape[1] // 2, dim=-1).indices
    order = torch.rand(x.shape[1])
    picked = x[:, order.argsort()]
    weights = torch.rand(x.shape[1])
    top = weights.topk(2).values * x
    return x[rows, keep], picked, top
"""


@pytest.mark.parametrize(
    "name,host",
    [
        ("scores", True),  # `.topk(k).indices`: an advanced index wherever `scores` lives
        ("keep", True),
        ("order", True),  # `.argsort()` inside the index
        ("weights", False),  # `.topk(2).values` meets `x` in arithmetic
    ],
)
def test_a_method_computed_from_the_receiver_alone_keeps_it_a_host_value(name, host):
    ctx = FileContext("m.py", METHOD_CODE, cst.parse_module(METHOD_CODE))
    (fn,) = [f for f, _ in ctx.call_sites.functions["forward"]]
    assert ctx.host_values.host_only(fn, name) is host


PARAMETER_CODE = """\
import torch

def gated(a, b, n_channels):
    n = n_channels[0]
    return torch.tanh(a[:, :n]) * torch.sigmoid(b[:, n:])

def counted(x, steps):
    for i in range(int(steps)):
        x = x + 1
    return x

def mixed(a, w):
    return a[:, : w[0]] * w

def forward(self, x):
    width = torch.IntTensor([4])
    steps = torch.tensor([3])
    weight = torch.tensor([2])
    return gated(x, x, width) + counted(x, steps=steps) + mixed(x, weight)
"""


@pytest.mark.parametrize("name,host", [("width", True), ("steps", True), ("weight", False)])
def test_a_tensor_handed_to_a_parameter_used_only_as_a_number_is_a_host_value(name, host):
    ctx = FileContext("m.py", PARAMETER_CODE, cst.parse_module(PARAMETER_CODE))
    (fn,) = [f for f, _ in ctx.call_sites.functions["forward"]]
    assert ctx.host_values.host_only(fn, name) is host
