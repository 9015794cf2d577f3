"""Python's scoping rules (engine/semantic/scopes.py, the one implementation): which binding a read of a name
sees, over the ast facts every file has, asked through the linted file's libcst tree."""

from __future__ import annotations

import ast

import libcst as cst
import pytest

from torchlint.engine.context import FileContext
from torchlint.engine.core.walk import iter_nodes
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


def test_walrus_binds_in_the_lambda_around_it_and_a_header_s_outside():
    code = "f = lambda: (y := 1)\n\ndef g(x=(d := 2)):\n    return x\n"
    assert _where(code, "y", "<lambda>") == "<lambda>"
    assert _where(code, "y", "<module>") is None
    assert _where(code, "d", "g") == "<module>"


def test_a_comprehension_in_the_first_iterable_is_evaluated_outside():
    code = "def f(ys):\n    return [x for x in [y for y in ys]]\n"
    module = cst.parse_module(code)
    scopes = Scopes(module, python_scopes.read(ast.parse(code), code))
    outer, inner = (n for n in iter_nodes(module) if isinstance(n, cst.ListComp))
    fn = module.body[0]
    assert scopes.info(inner).parent.node is fn  # not the outer comprehension
    assert scopes.binding_scope("x", outer) is outer and scopes.binding_scope("x", inner) is None
    assert scopes.binding_scope("y", inner) is inner and scopes.binding_scope("ys", inner) is fn


def test_the_linted_file_asks_the_facts_the_inference_reads():
    """One implementation: the libcst tree's scopes are the summary's, the same objects the inference uses."""
    code = "import torch\n\nclass C:\n    def m(self, net):\n        return [p for p in net.parameters()]\n"
    ctx = FileContext("m.py", code, cst.parse_module(code))
    facts = ctx.semantics.inference.facts
    method = next(n for n in iter_nodes(ctx.module) if isinstance(n, cst.FunctionDef))
    comp = next(n for n in iter_nodes(ctx.module) if isinstance(n, cst.ListComp))
    assert ctx.scopes.info(method).facts is facts.scopes[id(facts.functions["m"][0][0])]
    assert ctx.scopes.info(comp).facts in facts.expression_scopes()
    assert ctx.scopes.info(method).parent.is_class


def test_a_tree_its_facts_do_not_describe_binds_nothing():
    """Text CPython refuses has no summary: its scopes are unknown, never guessed from another reading."""
    code = "def f():\n    net = 1\n"
    module = cst.parse_module(code)
    scopes = Scopes(module, python_scopes.read(ast.parse(""), ""))
    assert scopes.binding_scope("net", module.body[0]) is None
    assert scopes.info(module.body[0]) is None


@pytest.mark.parametrize(
    "compound",
    [
        "if c:\n    def a():\n        pass\nelse:\n    def b():\n        pass\n",
        "try:\n    def a():\n        pass\nexcept E:\n    def b():\n        pass\nelse:\n    def c():\n        pass\nfinally:\n    def d():\n        pass\n",
        "for x in y:\n    def a():\n        pass\nelse:\n    def b():\n        pass\n",
    ],
)
def test_defs_in_every_branch_keep_their_scopes(compound):
    """The summary lists defs in source order, branch by branch; it once read an `else` before its `if`, so
    the file's defs matched nothing and every scope of such a file was unknown (an engine crash on NVlabs/edm)."""
    scopes, named = _scopes(compound + "def last():\n    net = 1\n    return net\n")
    assert _where(compound + "def last():\n    net = 1\n    return net\n", "net", "last") == "last"
    assert all(scopes.info(node) is not None for name, node in named.items() if name != "<module>")


@pytest.mark.parametrize(
    "code,resolves",
    [
        # the notebook's own `def ToTensor()` after the import: the program's object, not torchvision's
        ("from torchvision.transforms.v2 import ToTensor\ndef ToTensor():\n    return 1\nt = ToTensor()\n", None),
        ("from torchvision.transforms.v2 import ToTensor\nclass ToTensor:\n    pass\nt = ToTensor()\n", None),
        # an import after the def binds the name again: the library's
        (
            "def ToTensor():\n    return 1\nfrom torchvision.transforms.v2 import ToTensor\nt = ToTensor()\n",
            "torchvision.transforms.v2.ToTensor",
        ),
        # a method of that name binds nothing at module level
        (
            "from torchvision.transforms.v2 import ToTensor\nclass A:\n    def ToTensor(self):\n        pass\n"
            "t = ToTensor()\n",
            "torchvision.transforms.v2.ToTensor",
        ),
    ],
)
def test_a_module_level_def_after_an_import_is_the_name_s_binding(code, resolves):
    from torchlint.engine.semantic.names import Imports

    module = cst.parse_module(code)
    call = next(n for n in iter_nodes(module) if isinstance(n, cst.Call) and isinstance(n.func, cst.Name))
    assert Imports(module).qualname(call.func) == resolves
