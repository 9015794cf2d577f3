"""The file's call index: where each call sits, as the analyses that share it ask."""

from __future__ import annotations

import libcst as cst

from torchlint.engine.semantic.call_sites import index, statement_calls

SOURCE = """\
import torch

@register(make())
def helper(x, y=default()):
    return x

class Trainer:
    def evaluate(self):
        with torch.no_grad():
            return self.run()

    def fit(self, loader):
        for batch in loader:
            helper(batch)
            self.evaluate()
            (lambda b: helper(b))(batch)
        else:
            done()
        callback = self.evaluate
"""


def _site(sites, name):
    (found,) = [s for s in sites.calls if cst.Module([]).code_for_node(s.call) == name]
    return found


def test_each_call_knows_its_function_loop_with_lambda_and_header():
    sites = index(cst.parse_module(SOURCE))
    helper, trainer = sites.functions["helper"][0][0], sites.functions["fit"][0][1][0]
    assert _site(sites, "make()").header and _site(sites, "make()").chain == (helper,)
    assert _site(sites, "default()").header
    run = _site(sites, "self.run()")
    assert run.function is sites.functions["evaluate"][0][0] and len(run.withs) == 1 and not run.in_loop
    assert _site(sites, "helper(batch)").in_loop and _site(sites, "self.evaluate()").in_loop
    assert _site(sites, "helper(b)").in_lambda and not _site(sites, "helper(b)").in_loop
    assert not _site(sites, "done()").in_loop  # a loop's `else` runs once, after it
    assert sites.functions["fit"][0][1] == (trainer,) and type(trainer) is cst.ClassDef
    assert [cst.Module([]).code_for_node(s.call) for s in sites.by_key[("name", "helper")]] == [
        "helper(batch)",
        "helper(b)",
    ]


def test_references_are_names_read_without_a_call():
    sites = index(cst.parse_module(SOURCE))
    assert ("self", "evaluate") in sites.referenced  # `callback = self.evaluate`
    assert ("self", "run") not in sites.referenced  # only ever called
    assert ("name", "b") not in sites.referenced  # inside a lambda
    assert ("name", "default") not in sites.referenced and ("name", "y") not in sites.referenced  # a def's header


def test_calls_made_as_statements_are_those_whose_value_nobody_uses():
    module = cst.parse_module(SOURCE + "setup()\nif ready: launch(); x = build()\n")
    code = cst.Module([]).code_for_node
    found = [code(c) for c in statement_calls(module)]
    # in methods, loop bodies, `else` blocks and one-line suites; not a returned, assigned or decorating call
    assert found == [
        "helper(batch)",
        "self.evaluate()",
        "(lambda b: helper(b))(batch)",
        "done()",
        "setup()",
        "launch()",
    ]
