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
    assert _key(lint_text("x.py", text, ALL, parser=parser)) == _key(lint_text("x.py", text, ALL))


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
    assert parser.whole_checks == 1  # CPython parsed the edited statement alone, and the first text whole


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


def _edits(text: str) -> list[str]:
    """Edits as typing makes them, at a few places of the file: some keep it valid, some break it."""
    lines = text.splitlines(keepends=True)
    out = []
    for at in {len(lines) // 4, len(lines) // 2, 3 * len(lines) // 4, len(lines) - 1}:
        if not 0 <= at < len(lines):
            continue
        line = lines[at]
        body = line.rstrip("\r\n")
        end = line[len(body) :]
        for new in (
            "# edited\n",  # a line replaced by a comment
            "",  # a line deleted
            body + "  # ok" + end,  # typed at the end of a line
            body + " (" + end,  # a bracket left open
            "    " + line,  # indented
            line + "added = 1\n",  # a top-level statement inserted
            line + "\n",  # a blank line inserted
        ):
            out.append("".join([*lines[:at], new, *lines[at + 1 :]]))
    return out


@pytest.mark.parametrize("path", _sources()[::3], ids=lambda p: p.name)
def test_cuts_found_from_the_edited_chunk_are_those_of_a_whole_parse(path):
    from torchlint.engine.core.source import syntax_error
    from torchlint.engine.incremental import _cuts

    text = path.read_text(encoding="utf-8")
    for edited in _edits(text):
        parser = ChunkParser()
        parser.parse(text)
        assert parser.cuts(edited) == _cuts(edited)
        assert (parser.syntax_error(edited) is None) == (syntax_error(edited) is None)
        if _cuts(edited) is not None:
            assert parser.parse(edited).code == edited


def test_the_call_index_of_statements_an_edit_left_alone_is_reused():
    parser = ChunkParser()
    lint_text("x.py", EDITABLE, ALL, parser=parser)
    before = {id(part) for _stmt, part in parser.call_site_parts.values()}
    edited = EDITABLE.replace(
        "def step_21(model, opt, x):\n    opt.zero_grad()\n    model(x).sum().backward()\n    opt.step()\n",
        "def step_21(loader):\n    model = torch.nn.Linear(2, 1)\n    opt = torch.optim.SGD(model.parameters())\n"
        "    for x in loader:\n        model(x).sum().backward()\n        opt.step()\n",
    )
    whole = lint_text("x.py", edited, ALL)
    assert _key(lint_text("x.py", edited, ALL, parser=parser)) == _key(whole) != []
    after = [id(part) for _stmt, part in parser.call_site_parts.values()]
    assert len(after) == 41 and sum(p in before for p in after) >= 39
