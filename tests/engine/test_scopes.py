"""Python's scoping rules (engine/semantic/scopes.py): which binding a read of a name sees."""

from __future__ import annotations

import ast

import libcst as cst
import pytest

from torchlint.engine.semantic import scopes as python_scopes
from torchlint.engine.semantic.scopes import Scopes


def _scopes(code: str) -> tuple[Scopes, dict[str, cst.CSTNode]]:
    module = cst.parse_module(code)
    named: dict[str, cst.CSTNode] = {"<module>": module}

    class Collect(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            named[node.name.value] = node

        def visit_ClassDef(self, node: cst.ClassDef) -> None:
            named[node.name.value] = node

        def visit_ListComp(self, node: cst.ListComp) -> None:
            named["<listcomp>"] = node

        def visit_Lambda(self, node: cst.Lambda) -> None:
            named["<lambda>"] = node

    module.visit(Collect())
    return Scopes(module, python_scopes.read(ast.parse(code), code)), named


def _where(code: str, name: str, at: str) -> str | None:
    scopes, named = _scopes(code)
    found = scopes.binding_scope(name, named[at])
    return next((k for k, v in named.items() if v is found), None)


def test_a_local_of_one_function_is_not_another_functions():
    code = "def a():\n    net = 1\n\ndef b():\n    net = 2\n    return net\n\ndef c():\n    return net\n"
    assert _where(code, "net", "a") == "a"
    assert _where(code, "net", "b") == "b"
    assert _where(code, "net", "c") is None  # unbound at module level: no function's `net`


def test_module_names_shadowed_by_parameters_and_locals():
    code = (
        "net = 0\n\ndef f(net):\n    pass\n\ndef g():\n    for net in []:\n        pass\n\ndef h():\n    return net\n"
    )
    assert _where(code, "net", "f") == "f"
    assert _where(code, "net", "g") == "g"
    assert _where(code, "net", "h") == "<module>"


def test_closures_see_the_enclosing_function():
    code = "def outer():\n    net = 1\n    def inner():\n        return net\n    return inner\n"
    assert _where(code, "net", "inner") == "outer"


def test_class_bodies_are_invisible_to_their_methods():
    code = "net = 0\n\nclass C:\n    net = 1\n    def m(self):\n        return net\n"
    assert _where(code, "net", "C") == "C"
    assert _where(code, "net", "m") == "<module>"


def test_global_and_nonlocal_declarations():
    code = (
        "def f():\n    global net\n    net = 1\n\n"
        "def outer():\n    net = 1\n    def inner():\n        nonlocal net\n        net = 2\n    return inner\n"
    )
    assert _where(code, "net", "f") == "<module>"
    assert _where(code, "net", "inner") == "outer"
    assert _where(code + "\ndef g():\n    return net\n", "net", "g") == "<module>"  # bound by f's `global`


def test_comprehension_targets_are_their_own_and_walrus_leaks_out():
    code = "def f(xs):\n    ys = [x for x in xs if (last := x)]\n    return last\n"
    assert _where(code, "x", "<listcomp>") == "<listcomp>"
    assert _where(code, "x", "f") is None
    assert _where(code, "last", "f") == "f"
    assert _where(code, "xs", "<listcomp>") == "f"


@pytest.mark.parametrize(
    "binding",
    [
        "import net",
        "from m import net",
        "from m import x as net",
        "with open(p) as net: pass",
        "try:\n        pass\n    except E as net:\n        pass",
        "del net",
        "net: int",
        "net += 1",
        "a, (b, *net) = v",
        "def net(): pass",
        "class net: pass",
        "match v:\n        case [*net]:\n            pass",
    ],
)
def test_every_binding_form_makes_a_local(binding):
    code = f"net = 0\n\ndef f():\n    {binding}\n"
    assert _where(code, "net", "f") == "f"


def test_defaults_and_decorators_are_read_in_the_enclosing_scope():
    code = "def outer():\n    d = 1\n    @deco(d)\n    def inner(x=d, *, y: T = d):\n        return x\n"
    scopes, named = _scopes(code)
    assert scopes.binding_scope("d", named["inner"]) is named["outer"]
    assert not scopes.info(named["outer"]).local & {"x", "y"}  # parameters bind in the function only
    assert scopes.is_parameter("y", named["inner"])


def test_lambda_parameters():
    code = "net = 0\nf = lambda net: net\n"
    assert _where(code, "net", "<lambda>") == "<lambda>"
