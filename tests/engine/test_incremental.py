"""The language server's incremental parser gives the same tree text and findings as a whole parse."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import libcst as cst
import pytest

from fixture_expectations import FIXTURES
from torchlint.engine import lint_text
from torchlint.engine.incremental import ChunkParser
from torchlint.registry import rules

ALL = list(rules().values())


def _sources() -> list[Path]:
    files = sorted(FIXTURES.rglob("*.py"))
    spec = importlib.util.find_spec("torch")
    if spec and spec.submodule_search_locations:
        files += sorted((Path(list(spec.submodule_search_locations)[0]) / "nn" / "modules").glob("*.py"))[:30]
    return files


def _key(result):
    return [(f.line, f.column, f.end_line, f.end_column, f.code, f.message, f.fix) for f in result.findings]


@pytest.mark.parametrize("path", _sources(), ids=lambda p: p.name)
def test_same_findings_as_a_whole_parse(path):
    text = path.read_text(encoding="utf-8")
    parser = ChunkParser()
    assert parser.parse(text).code == text
    assert _key(lint_text("x.py", text, ALL, parser=parser.parse)) == _key(lint_text("x.py", text, ALL))


EDITABLE = "import torch\n\n\n" + "".join(
    f"# block {i}\ndef step_{i}(model, opt, x):\n    opt.zero_grad()\n    model(x).sum().backward()\n    opt.step()\n\n\n"
    for i in range(40)
)


def test_an_edit_reparses_only_its_statement():
    parser = ChunkParser()
    parser.parse(EDITABLE)
    edited = EDITABLE.replace("def step_20(model, opt, x):\n    opt.zero_grad()\n", "def step_20(model, opt, x):\n")
    parser.reused = 0
    module = parser.parse(edited)
    assert module.code == edited
    assert parser.reused >= 39 and parser.fallbacks == 0


@pytest.mark.parametrize(
    "text",
    [
        "x = 1\ny = 2\nz = (\n",  # syntax error: the whole-file parse reports it
        "if x:\n    a = 1\n    # trailing indented comment\n\nb = 2\nc = 3\n",  # a block footer
        "a = 1; b = 2\nc = 3\n\n\nd = 4\n",
        "\tif x:\n\t\tpass\n",
        "# only a comment\n",
        "",
        "x = 1\r\ny = 2\r\nz = 3\r\n",
    ],
)
def test_odd_layouts_fall_back_or_match(text):
    parser = ChunkParser()
    try:
        expected = cst.parse_module(text).code
    except cst.ParserSyntaxError:
        with pytest.raises(cst.ParserSyntaxError):
            parser.parse(text)
        return
    assert parser.parse(text).code == expected == text
