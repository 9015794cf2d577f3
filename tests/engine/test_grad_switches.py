"""Where a file switches `requires_grad` (grad_switches.py): read from its tree, never from its text."""

from __future__ import annotations

import libcst as cst

from torchlint.engine.context import FileContext
from torchlint.engine.torch.grad_switches import read

SOURCE = """\
import torch
G.requires_grad_(False)
D.requires_grad_(True)
self.w.requires_grad = False
head.bias.requires_grad = True
# net.requires_grad_(False) only in a comment
print("enc.requires_grad = False")
for p in E.parameters():
    p.requires_grad = False
for p in E.parameters():
    p.grad = None
def freeze(m):
    for p in m.parameters():
        p.requires_grad = False
def other(m):
    return m
"""


def test_what_is_turned_off_comes_from_calls_and_assignments_not_comments_or_strings():
    switches = read(cst.parse_module(SOURCE), SOURCE)
    assert switches.turned_off == {"G", "self.w", "p"}  # `p`: a parameter the loops below turn off
    assert [cst.Module([]).code_for_node(c.func) for c in switches.calls] == ["G.requires_grad_", "D.requires_grad_"]


def test_loops_and_functions_that_set_requires_grad_are_known():
    module = cst.parse_module(SOURCE)
    switches = read(module, SOURCE)
    code = cst.Module([]).code_for_node
    assert [code(loop.iter) for loop in switches.loops] == ["E.parameters()", "m.parameters()"]
    ctx = FileContext("t.py", SOURCE, module)
    assert {name for name, fn in ctx.local_functions().items() if id(fn) in switches.functions} == {"freeze"}


def test_a_file_that_never_names_requires_grad_is_not_walked():
    source = "for p in E.parameters():\n    p.grad = None\n"
    switches = read(cst.parse_module(source), source)
    assert not switches.calls and not switches.turned_off and not switches.loops and not switches.functions
