"""The shared statement walk: the branch path, loops and `with` blocks each statement sits in."""

from __future__ import annotations

import libcst as cst

from torchlint.engine.context import FileContext
from torchlint.engine.flow.blocks import headers, statements
from torchlint.engine.flow.graph_flow import Body
from torchlint.engine.flow.loop_events import dominates, exclusive

SOURCE = """\
for batch in loader:
    with torch.no_grad():
        a()
    if ready:
        b()
    elif late:
        c()
    else:
        d()
    try:
        e()
    except ValueError:
        f()
    else:
        g()
    finally:
        h()
    match batch:
        case 1:
            i()
    def helper():
        j()
else:
    k()
while x:
    m()
    n()
"""


def _calls(stmt: cst.BaseStatement) -> str:
    return cst.Module([stmt]).code.strip() if isinstance(stmt, cst.SimpleStatementLine) else type(stmt).__name__


def _arms(path) -> list:
    return [(type(node).__name__, arm) for node, arm in path]


def test_each_statement_comes_before_the_ones_nested_in_it_and_definitions_are_skipped():
    order = [_calls(stmt) for stmt, _place in statements(cst.parse_module(SOURCE).body)]
    assert order == [
        "For",
        "With",
        "a()",
        "If",
        "b()",
        "If",
        "c()",
        "d()",
        "Try",
        "e()",
        "f()",
        "g()",
        "h()",
        "Match",
        "i()",
        "k()",
        "While",
        "m()",
        "n()",
    ]


def test_places_say_which_arm_loop_and_with_block_lead_to_a_statement():
    places = {_calls(stmt): place for stmt, place in statements(cst.parse_module(SOURCE).body)}
    assert _arms(places["a()"].path) == [("For", "body")]
    assert [type(w).__name__ for w in places["a()"].withs] == ["With"]
    assert _arms(places["c()"].path) == [("For", "body"), ("If", "else"), ("If", "if")]
    assert _arms(places["f()"].path) == [("For", "body"), ("Try", "except")]
    assert _arms(places["g()"].path) == [("For", "body"), ("Try", "else")]
    assert _arms(places["h()"].path) == [("For", "body")]  # a finally always runs
    assert _arms(places["i()"].path) == [("For", "body"), ("Match", 0)]
    assert _arms(places["k()"].path) == [("For", "else")] and places["k()"].loops == ()
    assert len(places["m()"].loops) == 1 and not places["m()"].withs
    assert places["a()"].alone and not places["m()"].alone


def test_a_try_else_and_its_handler_never_both_run():
    places = {_calls(stmt): place for stmt, place in statements(cst.parse_module(SOURCE).body)}
    assert exclusive(places["f()"], places["g()"])
    assert dominates(places["e()"], places["h()"]) and not dominates(places["g()"], places["e()"])


def test_headers_are_what_a_compound_statement_evaluates_first():
    stmt = cst.parse_module("with a() as x, b():\n    pass\n").body[0]
    assert [cst.Module([]).code_for_node(h) for h in headers(stmt)] == ["a()", "b()"]


def test_graph_flow_reads_with_blocks_that_turn_gradients_off_from_the_shared_walk():
    source = "import torch\nwith torch.no_grad():\n    y = model(x)\nz = model(x)\n"
    ctx = FileContext("t.py", source, cst.parse_module(source))
    body = Body(ctx, ctx.module, ctx.semantics.scope_for(ctx.module, None))
    assert [d.no_grad for d in body.defs["y"]] == [True]
    assert [d.no_grad for d in body.defs["z"]] == [False]
