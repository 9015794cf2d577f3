"""Rules read the shared analyses they declare, and reach the file through them (issue 25, item 3).

1. Every rule, run alone on its examples and on the fixtures with only the analyses it declares
   (`Rule.analyses`, core/analyses.py) allowed, asks for nothing else.
2. No rule reaches the module tree (`ctx.module`, beyond rendering a node's code or line), the source
   text (`ctx.text`) or another file's tree (`ast`, a project summary) itself: those reads belong in a
   declared analysis. No rule does.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from fixture_expectations import FIXTURES, fixture_files
from torchlint.engine import lint_text
from torchlint.engine.context import FileContext, analysis
from torchlint.engine.core.analyses import ALWAYS, Analysis
from torchlint.engine.core.source import decode
from torchlint.registry import rules

CATALOGUE = rules()
RULES = Path(__file__).resolve().parents[2] / "rules"
WALKS, TEXT, OTHER_FILES = "walks the module tree", "reads the source text", "reads another file's tree"

# Rules that still read the tree, the text or another file themselves: none (issue 25 item 3). An entry here
# would have to say why; the test below fails on any rule that does.
STILL_READING: set[tuple[str, str]] = set()


def _declared_only(rule, path: str, text: str, torch_version: str | None = None) -> list[str]:
    result = lint_text(path, text, [rule], torch_version=torch_version, only_declared=True)
    return [e for e in result.errors if "AnalysisNotDeclared" in e]


@pytest.mark.parametrize("code", sorted(CATALOGUE))
def test_rule_asks_only_for_what_it_declares_on_its_examples(code):
    rule = CATALOGUE[code]
    for source in rule.VALID:
        assert not _declared_only(rule, "example.py", source)
    for ex in rule.INVALID:
        assert not _declared_only(rule, "example.py", ex.source, ex.torch_version)


def test_rules_ask_only_for_what_they_declare_on_the_fixtures():
    undeclared = []
    for path in fixture_files(FIXTURES):
        if path.suffix != ".py":
            continue
        text = decode(path.read_bytes()).text
        for rule in CATALOGUE.values():
            undeclared += [f"{path.name} {e}" for e in _declared_only(rule, str(path), text)]
    assert not undeclared


def test_a_guard_chosen_by_the_caller_is_read_through_declared_analyses():
    """TL303's calling contexts ask which scope binds a guard a caller passes in (cuda_guards reads the scopes):
    found on torch's own _dynamo/compiled_autograd.py, in none of the examples or fixtures."""
    source = (
        "import torch\n"
        "def run(x, use_cuda):\n"
        "    if use_cuda:\n"
        "        return x.cuda()\n"
        "    return x\n"
        "run(torch.ones(1), torch.cuda.is_available())\n"
    )
    asked: set[str] = set()
    assert not _declared_only(CATALOGUE["TL303"], "example.py", source)
    lint_text("example.py", source, [CATALOGUE["TL303"]], asked=asked)
    assert "scopes" in asked


def test_an_undeclared_analysis_fails_the_rule():
    class Reader(CATALOGUE["TL117"]):  # a rule of this file's own: reads the kinds without declaring them
        analyses = frozenset()

    source = "import torch\nxs = []\nfor b in loader:\n    xs.append(model(b))\n"
    errors = lint_text("example.py", source, [Reader], only_declared=True).errors
    assert errors and all("AnalysisNotDeclared" in e for e in errors)


def test_every_analysis_is_a_context_member():
    for a in Analysis:
        assert a is Analysis.KINDS or hasattr(FileContext, a.value), a
    assert all(hasattr(FileContext, m) for m in ALWAYS)


def test_every_context_analysis_can_be_declared():
    """A lazily built member a rule could ask for is named in Analysis, or built for every file."""
    built = {name for name, member in vars(FileContext).items() if isinstance(member, analysis)}
    assert built == {a.value for a in Analysis if a is not Analysis.KINDS} | ALWAYS


def _ctx(expr: ast.expr) -> bool:
    """`ctx` or `self.ctx`."""
    if isinstance(expr, ast.Name):
        return expr.id == "ctx"
    return isinstance(expr, ast.Attribute) and expr.attr == "ctx" and isinstance(expr.value, ast.Name)


def _reads(path: Path) -> set[str]:
    """What a rule module reads itself instead of through an analysis."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found = set()
    for node in ast.walk(tree):
        parent = parents.get(node)
        if isinstance(node, ast.Attribute) and _ctx(node.value) and node.attr == "module":
            rendering = (isinstance(parent, ast.Attribute) and parent.attr == "code_for_node") or (
                isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id == "line_of"
            )
            if not rendering:
                found.add(WALKS)
        elif isinstance(node, ast.Attribute) and _ctx(node.value) and node.attr == "text":
            found.add(TEXT)
        elif isinstance(node, (ast.Import, ast.ImportFrom)) and "ast" in (
            *(a.name for a in node.names),
            getattr(node, "module", None),
        ):
            found.add(OTHER_FILES)
        elif (
            isinstance(node, ast.Attribute) and node.attr in ("summary", "own_summary") and isinstance(parent, ast.Call)
        ):
            found.add(OTHER_FILES)
    return found


def test_rules_reach_the_file_through_analyses():
    found = {(str(p.relative_to(RULES)), what) for p in sorted(RULES.rglob("*.py")) for what in _reads(p)}
    new = sorted(found - STILL_READING)
    assert not new, f"read these through a declared analysis (core/analyses.py), not in the rule: {new}"
    stopped = sorted(STILL_READING - found)
    assert not stopped, f"these rules stopped: take them off STILL_READING: {stopped}"
