"""The file's layout (layout.py): statement indentation, and a statement re-rendered inside a new block."""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.layout import Layout

SOURCE = """\
def f(x):
  if x:
        for i in x:  # each item
            g(i)  # the last line
  elif y:
      h()
  return s(\"\"\"a
b\"\"\")
"""


def _parts(module: cst.Module):
    fn = module.body[0]
    branch = fn.body.body[0]
    loop = branch.body.body[0]
    return fn, branch, loop, branch.orelse.body.body[0], fn.body.body[1]


def test_each_statement_has_the_indentation_of_the_blocks_around_it():
    module = cst.parse_module(SOURCE)
    layout = Layout(module)
    fn, branch, loop, call_h, ret = _parts(module)
    assert layout.indent_of(fn) == ""
    assert layout.indent_of(branch) == "  "
    assert layout.indent_of(loop) == "        "  # each block keeps its own indentation
    assert layout.indent_of(call_h) == "      "  # `elif` sits at the `if`'s indentation
    assert layout.indent_of(cst.SimpleStatementLine([cst.Pass()])) is None  # not a statement of the file


def test_a_statement_is_rendered_inside_a_new_block_at_its_indentation():
    module = cst.parse_module(SOURCE)
    layout = Layout(module)
    _, _, loop, _, ret = _parts(module)
    unit = module.default_indent
    assert layout.wrapped_in("with torch.no_grad():", loop) == (
        "with torch.no_grad():\n"
        f"        {unit}for i in x:  # each item\n"  # re-indented; the last line's comment is left out
        f"        {unit}    g(i)"
    )
    assert layout.wrapped_in("with torch.no_grad():", ret) is None  # a multi-line string cannot be re-indented
