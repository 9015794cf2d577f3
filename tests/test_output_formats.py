"""SARIF and GitHub annotations that CI can attach: the real file (a notebook's
`.ipynb`, a name with spaces), relative to the repository, percent-encoded in
SARIF, the line of the file on disk, the cell in the message, fingerprints that
survive line shifts; SARIF checked against the 2.1.0 schema and the GitHub lines
against the workflow-command grammar."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from urllib.parse import unquote

import jsonschema
import pytest

from selecting import extend_select
from test_notebooks import SETUP_CELL, TRAIN_CELL, write_notebook
from torchlint.findings import Finding, Severity
from torchlint.reporters import github

SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())
PY = SETUP_CELL + TRAIN_CELL + "sd = torch.load('m.pt')\n"


@pytest.fixture
def repo(tmp_path):
    """A repository with a notebook and a file with spaces (and a comma) in its path."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "pyproject.toml").write_text(extend_select("TL601"))  # the torch.load is a subject below
    (tmp_path / "my runs").mkdir()
    (tmp_path / "my runs" / "train v2, final.py").write_text(PY)
    (tmp_path / "notebooks").mkdir()
    write_notebook(tmp_path / "notebooks" / "lab nb.ipynb", ["md:# Lab", SETUP_CELL, "x = # TODO\n", TRAIN_CELL])
    return tmp_path


def sarif(run_cli, cwd, *paths):
    r = run_cli("check", "--no-cache", "--output-format", "sarif", *paths, cwd=cwd)
    doc = json.loads(r.stdout)
    jsonschema.Draft7Validator(SCHEMA).validate(doc)
    return doc["runs"][0]


def at(repo, location):
    """The text of the file on disk at a SARIF location's start."""
    artifact, region = location["physicalLocation"]["artifactLocation"], location["physicalLocation"]["region"]
    assert artifact["uriBaseId"] == "%SRCROOT%"
    lines = (repo / unquote(artifact["uri"])).read_text().splitlines()
    return lines[region["startLine"] - 1][region["startColumn"] - 1 :]


def test_sarif_names_real_files_relative_to_the_repository(repo, run_cli):
    run = sarif(run_cli, repo / "notebooks", "..")  # run from a subdirectory: URIs stay repository-relative
    assert run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": repo.as_uri() + "/"}}
    assert run["columnKind"] == "unicodeCodePoints"
    got = {
        (r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], r["ruleId"], r["message"]["text"][:16])
        for r in run["results"]
    }
    assert got == {
        ("my%20runs/train%20v2%2C%20final.py", "TL101", "gradients are ne"),
        ("my%20runs/train%20v2%2C%20final.py", "TL601", "`torch.load` wit"),
        ("notebooks/lab%20nb.ipynb", "TL000", "cell 3, line 1: "),
        ("notebooks/lab%20nb.ipynb", "TL101", "cell 4, line 1: "),
    }


def test_sarif_regions_are_lines_of_the_file_on_disk(repo, run_cli):
    run = sarif(run_cli, repo, ".")
    by = {
        (r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"][:5], r["ruleId"]): r for r in run["results"]
    }
    assert at(repo, by["my%20", "TL601"]["locations"][0]).startswith("torch.load('m.pt')")
    notebook_error = by["noteb", "TL000"]
    assert at(repo, notebook_error["locations"][0]).startswith('# TODO\\n"')  # inside the JSON string of cell 3
    assert notebook_error["properties"] == {"cell": 3, "cellLine": 1, "cellColumn": 5}
    assert at(repo, by["noteb", "TL101"]["locations"][0]).startswith('for x, y in loader:\\n"')
    assert by["noteb", "TL101"]["properties"]["cell"] == 4


def fingerprints(run):
    """fingerprint -> (rule, what the message says before its first colon)."""
    return {
        r["partialFingerprints"]["primaryLocationLineHash"]: (r["ruleId"], r["message"]["text"].split(":")[0])
        for r in run["results"]
    }


def test_fingerprints_survive_lines_and_cells_added_above(repo, run_cli):
    before = fingerprints(sarif(run_cli, repo, "."))
    py = repo / "my runs" / "train v2, final.py"
    py.write_text("# a new header comment\n\n" + py.read_text())
    write_notebook(
        repo / "notebooks" / "lab nb.ipynb", ["md:# Lab", "import os", SETUP_CELL, "x = # TODO\n", TRAIN_CELL]
    )
    after = fingerprints(sarif(run_cli, repo, "."))
    assert len(before) == 4 and set(after) == set(before)
    moved = {fp: (before[fp][1], after[fp][1]) for fp in before if before[fp] != after[fp]}
    assert sorted(moved.values()) == [("cell 3, line 1", "cell 4, line 1"), ("cell 4, line 1", "cell 5, line 1")]


def test_the_same_finding_twice_on_the_same_text_gets_two_fingerprints(repo, run_cli):
    (repo / "twice.py").write_text("import torch\na = torch.load(p)\na = torch.load(p)\n")
    run = sarif(run_cli, repo, "twice.py")
    (a, b) = [r["partialFingerprints"]["primaryLocationLineHash"] for r in run["results"]]
    assert a != b


def test_files_outside_the_repository_get_an_absolute_uri(tmp_path, run_cli):
    (tmp_path / "repo").mkdir()
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    (tmp_path / "elsewhere x.py").write_text(PY)
    run = sarif(run_cli, tmp_path / "repo", tmp_path / "elsewhere x.py")
    artifact = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert artifact == {"uri": (tmp_path / "elsewhere x.py").as_uri()}


# GitHub's workflow command: `::error file=F,line=L,col=C,endLine=L,endColumn=C,title=T::message`, where
# property values escape `%`, `\r`, `\n`, `:` and `,`, and the message escapes `%`, `\r` and `\n`.
_VALUE = r"(?:[^%\r\n:,]|%25|%0D|%0A|%3A|%2C)*"
_COMMAND = re.compile(
    rf"::(?P<level>error|warning|notice) (?P<props>(?:file|line|col|endLine|endColumn|title)={_VALUE}"
    rf"(?:,(?:file|line|col|endLine|endColumn|title)={_VALUE})*)::(?P<message>(?:[^%\r\n]|%25|%0D|%0A)*)"
)


def _unescape(s: str) -> str:
    return s.replace("%0D", "\r").replace("%0A", "\n").replace("%3A", ":").replace("%2C", ",").replace("%25", "%")


def annotations(text):
    out = []
    for line in text.splitlines():
        m = _COMMAND.fullmatch(line)
        assert m, f"not a workflow command: {line!r}"
        props = dict(p.split("=", 1) for p in m["props"].split(","))
        out.append((m["level"], {k: _unescape(v) for k, v in props.items()}, _unescape(m["message"])))
    return out


def test_github_annotations_follow_the_workflow_command_grammar(repo, run_cli):
    out = run_cli("check", "--no-cache", "--output-format", "github", "..", cwd=repo / "my runs").stdout
    got = annotations(out)
    assert {(props["file"], props["title"]) for _, props, _ in got} == {
        ("my runs/train v2, final.py", "TL101"),
        ("my runs/train v2, final.py", "TL601"),
        ("notebooks/lab nb.ipynb", "TL000"),
        ("notebooks/lab nb.ipynb", "TL101"),
    }
    ((level, props, message),) = [a for a in got if a[1]["title"] == "TL000"]
    assert level == "error" and message == "TL000 cell 3, line 1: syntax error: invalid syntax"
    lines = (repo / "notebooks" / "lab nb.ipynb").read_text().splitlines()
    assert lines[int(props["line"]) - 1][int(props["col"]) - 1 :].startswith("# TODO")
    assert (props["endLine"], int(props["endColumn"]) - int(props["col"])) == (props["line"], len("# TODO"))
    ((_, props, _),) = [a for a in got if a[1]["title"] == "TL601"]
    py = (repo / "my runs" / "train v2, final.py").read_text().splitlines()
    assert py[int(props["line"]) - 1][int(props["col"]) - 1 :].startswith("torch.load(")


def test_github_escapes_what_the_grammar_reserves(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    f = Finding("odd: name,1.py", 2, 3, 2, 9, "TL000", "parse-error", "100% sure\r\nnext", Severity.ERROR)
    ((level, props, message),) = annotations(github.render([f]))
    assert (level, props["file"], props["line"], props["col"], message) == (
        "error",
        "odd: name,1.py",
        "2",
        "3",
        "TL000 100% sure\r\nnext",
    )
    assert "file=odd%3A name%2C1.py," in github.render([f])


def test_cell_positions_map_through_json_escapes():
    from torchlint.notebook_json import Layout

    source = 'note = "café \\t 😀 \\"q\\""\nsd = torch.load(p)\n'
    nb = {"cells": [{"cell_type": "markdown", "source": "x"}, {"cell_type": "code", "source": source.splitlines(True)}]}
    text = json.dumps(nb, indent=1)  # ensure_ascii: é and 😀 are \u escapes, the emoji a surrogate pair
    layout = Layout.of(text)
    assert layout.source(1) == source
    line, column = layout.position(1, 1, source.index("😀") + 1)
    assert text.splitlines()[line - 1][column - 1 :].startswith("\\ud83d\\ude00")
    line, column = layout.position(1, 2, 6)
    assert text.splitlines()[line - 1][column - 1 :].startswith('torch.load(p)\\n"')
    end_line, end_column = layout.position(1, 9, 99)  # past the cell: its end, the last string's closing quote
    assert (end_line, text.splitlines()[end_line - 1][end_column - 2 :]) == (line, 'n"')
    assert layout.position(5, 1, 1) is None
