"""The engine's fast paths answer exactly as the plain ones they replace (issue 25's speed work)."""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

import libcst as cst

from fixture_expectations import FIXTURES, fixture_files
from torchlint.engine.context import FileContext
from torchlint.engine.core import walk
from torchlint.engine.runner import applicable, lint_text
from torchlint.engine.semantic import inference, project, scopes
from torchlint.registry import rules

SOURCES = [p for p in fixture_files(FIXTURES) if p.suffix == ".py"]


def _plain_children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """What `walk.children` lists, read field by field."""
    out: list[cst.CSTNode] = []
    for name in walk._fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, (tuple, list)):
            out.extend(v for v in value if isinstance(v, cst.CSTNode))
        elif isinstance(value, cst.CSTNode):
            out.append(value)
    return out


def test_children_listed_per_class_are_the_fields_read_one_by_one():
    seen: set[type] = set()
    for path in SOURCES:
        module = cst.parse_module(path.read_text(encoding="utf-8"))
        stack: list[cst.CSTNode] = [module]
        while stack:
            node = stack.pop()
            seen.add(type(node))
            listed = walk.children(node)
            assert listed == _plain_children(node) and all(a is b for a, b in zip(listed, _plain_children(node)))
            stack.extend(listed)
        walk.forget_children()
    assert len(seen) > 50  # the fixtures cover most node classes


def test_a_leaf_class_has_no_field_that_can_hold_a_node():
    for cls in walk.LEAVES:
        assert all(walk._never_a_node(f.type) for f in dataclasses.fields(cls) if f.name in walk._fields(cls))


def test_the_prefilter_finds_what_a_plain_search_finds():
    catalogue = list(rules().values())
    texts = [p.read_text(encoding="utf-8") for p in SOURCES]
    texts += [src for r in catalogue for src in r.VALID] + [ex.source for r in catalogue for ex in r.INVALID]
    texts.append("x = a\u00a0is\u2028b  # whitespace other than spaces\nloss .backward()\n")
    for text in texts:
        plain = [r for r in catalogue if not r.requires or any(s in text for s in r.requires)]
        assert applicable(catalogue, text) == plain


def test_the_cli_keeps_what_it_learns_of_the_file_system_for_its_run_only(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text("")
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    script = pkg / "train.py"
    script.write_text("import helper\n")
    with project.files_unchanging():
        first = project.project_for(str(script))
        assert first is not None and first.root == tmp_path
        assert first.find_module("helper", pkg) is None
        (pkg / "helper.py").write_text("")
        (pkg / "setup.py").write_text("")  # a nearer root, created during the run
        assert project.project_for(str(script)) is first  # a snapshot: the run keeps what it learnt
        assert first.find_module("helper", pkg) is None
    after = project.project_for(str(script))  # outside the run: asked anew
    assert after is not None and after.root == pkg
    assert after.find_module("helper", pkg) == pkg / "helper.py"


def test_local_functions_from_a_statement_walk_are_the_call_index_ones():
    for path in SOURCES:
        text = path.read_text(encoding="utf-8")
        module = cst.parse_module(text)
        walked = FileContext(str(path), text, module).local_functions()
        indexed = FileContext(str(path), text, module)
        indexed.call_sites  # noqa: B018 - built first, it answers
        assert indexed.local_functions() == walked and list(indexed.local_functions()) == list(walked), path


def _enclosing(scope) -> list[cst.CSTNode]:
    nodes = []
    while scope is not None:
        nodes.append(scope.node)
        scope = scope.parent
    return nodes


def test_a_functions_scope_nests_as_the_call_index_chain_says():
    """Loop events reach a helper's scope through the scope analysis: the same nesting as the call index's."""
    for path in SOURCES:
        text = path.read_text(encoding="utf-8")
        module = cst.parse_module(text)
        indexed, scoped = FileContext(str(path), text, module), FileContext(str(path), text, module)
        for defs in indexed.call_sites.functions.values():
            for fn, chain in defs:
                expected = _enclosing(indexed.semantics.scope_of_chain((*chain, fn)))
                assert _enclosing(scoped.semantics.scope_at(fn)) == expected, (path, fn.name.value)


def test_walking_into_a_helper_builds_no_call_index():
    source = (
        "import torch\n"
        "def step(model, opt, x):\n"
        "    opt.zero_grad()\n"
        "    model(x).sum().backward()\n"
        "    opt.step()\n"
        "model = torch.nn.Linear(2, 2)\n"
        "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "for x in [torch.ones(2)]:\n"
        "    step(model, opt, x)\n"
    )
    asked: set[str] = set()
    lint_text("train.py", source, [rules()["TL104"]], asked=asked)
    assert "loop_analysis" in asked and "scopes" in asked
    assert "call_sites" not in asked


def test_the_lines_calling_a_name_are_those_a_search_for_every_called_word_finds():
    """inference._call_lines searches the text for one name: the same lines as every `word(` of the text
    listed by a regular expression (a whole word only, whitespace and newlines before the parenthesis)."""
    texts = [p.read_text(encoding="utf-8") for p in SOURCES]
    texts.append(
        "xstep(1)\nstep (2)\nstep\n(3)\nstep_(4)\n\u00e9step(5)\nsteps(6)\na.step(7); step(8)\nx = '1step(9)'\n"
    )
    for text in texts:
        everything: dict[str, set[int]] = {}
        for m in re.finditer(r"(\w+)\s*\(", text):
            everything.setdefault(m.group(1), set()).add(text.count("\n", 0, m.start()) + 1)
        file = scopes.read(ast.parse(text), text)
        for name in [*everything, "step", "never_called"]:
            assert inference._call_lines(file, name) == everything.get(name, set()), name
    assert inference._call_lines(scopes.read(ast.parse(texts[-1]), texts[-1]), "step") == {2, 3, 8}
