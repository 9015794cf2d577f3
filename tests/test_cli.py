"""The command line: exit codes, selection, output formats, fixes, bad input."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import jsonschema
import libcst as cst
import pytest

from selecting import extend_select

BUGGY = """\
import torch

model = torch.nn.Linear(2, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    torch.nn.functional.mse_loss(model(x), y).backward()
    opt.step()
sd = torch.load("ckpt.pt")
"""
CLEAN = "import torch\nsd = torch.load('x.pt', weights_only=True)\n"
JSON_KEYS = {
    "path",
    "line",
    "column",
    "end_line",
    "end_column",
    "code",
    "name",
    "message",
    "severity",
    "fix",
    "alternatives",
    "url",
}


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pyproject.toml").write_text(extend_select("TL601"))  # the torch.load is a subject below
    (tmp_path / "train.py").write_text(BUGGY)
    (tmp_path / "ok.py").write_text(CLEAN)
    return tmp_path


def test_exit_codes(project, run_cli):
    assert run_cli("check", project / "ok.py").returncode == 0
    r = run_cli("check", project)
    assert r.returncode == 1
    assert "train.py:5:1: TL101" in r.stdout and "train.py:8:6: TL601" in r.stdout
    assert run_cli("check", "--exit-zero", project).returncode == 0


def test_missing_path_is_usage_error(run_cli, tmp_path):
    r = run_cli("check", tmp_path / "nope.py")
    assert r.returncode == 2 and "nope.py: no such file or directory" in r.stderr


def test_unknown_code_on_command_line(run_cli, project):
    r = run_cli("check", "--select", "TL999", project)
    assert r.returncode == 2 and "TL999" in r.stderr


def test_select_and_ignore_prefixes(project, run_cli):
    out = run_cli("check", "--select", "TL6", "--output-format", "json", project).stdout
    assert {f["code"] for f in json.loads(out)} == {"TL601"}
    out = run_cli("check", "--ignore", "TL601", "--output-format", "json", project).stdout
    assert "TL601" not in {f["code"] for f in json.loads(out)}


def test_json_schema_exact(project, run_cli):
    items = json.loads(run_cli("check", "--output-format", "json", project).stdout)
    assert items
    for item in items:
        assert set(item) == JSON_KEYS
        assert item["severity"] in ("error", "warning", "info")
        assert item["line"] >= 1 and item["column"] >= 1
        assert item["url"].endswith(f"/docs/rules/{item['code']}.md")
        assert item["fix"] is not None or item["alternatives"] == []
        for fix in [item["fix"], *item["alternatives"]] if item["fix"] else []:
            assert set(fix) == {"message", "applicability", "risk", "edits"}
            assert fix["applicability"] in ("safe", "unsafe", "display")
            assert (fix["applicability"] == "unsafe") == bool(fix["risk"])
            for e in fix["edits"]:
                assert set(e) == {"line", "column", "end_line", "end_column", "content"}


def test_sarif_validates_against_schema(project, run_cli):
    doc = json.loads(run_cli("check", "--output-format", "sarif", ".", cwd=project).stdout)
    schema = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())
    jsonschema.Draft7Validator(schema).validate(doc)
    run = doc["runs"][0]
    assert {r["ruleId"] for r in run["results"]} == {"TL101", "TL601"}
    for r in run["results"]:
        loc = r["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"] == {"uri": "train.py", "uriBaseId": "%SRCROOT%"}
        assert loc["region"]["startLine"] >= 1
        assert r["partialFingerprints"]["primaryLocationLineHash"]
    ids = [d["id"] for d in run["tool"]["driver"]["rules"]]
    assert all(run["tool"]["driver"]["rules"][r["ruleIndex"]]["id"] == r["ruleId"] for r in run["results"])
    assert "TL101" in ids


def test_sarif_uri_is_repo_relative(tmp_path, run_cli):
    import subprocess

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "train.py").write_text(BUGGY)
    doc = json.loads(run_cli("check", "--output-format", "sarif", "pkg", cwd=tmp_path).stdout)
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in doc["runs"][0]["results"]}
    assert uris == {"pkg/train.py"}


def test_sarif_uri_of_a_file_outside_the_root_is_absolute(project, run_cli):
    (project / "elsewhere").mkdir()  # not a git repository: the working directory is the root
    doc = json.loads(run_cli("check", "--output-format", "sarif", "../train.py", cwd=project / "elsewhere").stdout)
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in doc["runs"][0]["results"]}
    assert uris == {(project / "train.py").as_uri()}


def test_github_annotations(project, run_cli):
    lines = run_cli("check", "--output-format", "github", project).stdout.splitlines()
    assert any(l.startswith("::error file=") and "title=TL101::" in l for l in lines)
    assert any(l.startswith("::warning file=") and "title=TL601::" in l for l in lines)


def test_statistics(project, run_cli):
    out = run_cli("check", "--statistics", project).stdout
    assert "TL101" in out and "missing-zero-grad" in out


def test_rules_and_rule_docs(run_cli):
    listing = run_cli("rules").stdout
    assert "TL101" in listing and "missing-zero-grad" in listing
    doc = run_cli("rule", "TL601").stdout
    for heading in ("## What it does", "## Why is this bad?", "## Example", "## Fix safety"):
        assert heading in doc
    bad = run_cli("rule", "TL999")
    assert bad.returncode == 2 and "unknown rule" in bad.stderr


def test_fix_and_diff(project, run_cli):
    original = (project / "train.py").read_text()
    diff = run_cli("check", "--diff", "--unsafe-fixes", project / "train.py")
    assert "+    opt.zero_grad()" in diff.stdout and "weights_only=True" in diff.stdout
    assert (project / "train.py").read_text() == original, "--diff must not write"
    os.chmod(project / "train.py", 0o640)
    r = run_cli("check", "--fix", "--unsafe-fixes", project / "train.py")
    assert r.returncode == 0, r.stdout + r.stderr
    fixed = (project / "train.py").read_text()
    cst.parse_module(fixed)
    assert "opt.zero_grad()" in fixed and 'torch.load("ckpt.pt", weights_only=True)' in fixed
    assert stat.S_IMODE(os.stat(project / "train.py").st_mode) == 0o640, "permissions kept"
    assert not [p for p in project.iterdir() if p.name.endswith(".torchlint")], "no temp files left"


def test_fix_keeps_crlf_bom_and_encoding(tmp_path, run_cli):
    f = tmp_path / "w.py"
    f.write_bytes(b"\xef\xbb\xbf# caf\xc3\xa9\r\nimport torch\r\nsd = torch.load(p)\r\n")
    assert run_cli("check", "--extend-select", "TL601", "--fix", "--unsafe-fixes", f).returncode == 0
    assert f.read_bytes() == b"\xef\xbb\xbf# caf\xc3\xa9\r\nimport torch\r\nsd = torch.load(p, weights_only=True)\r\n"
    g = tmp_path / "l.py"
    g.write_bytes(b"# -*- coding: latin-1 -*-\n# caf\xe9\nimport torch\nsd = torch.load(p)\n")
    assert run_cli("check", "--extend-select", "TL601", "--fix", "--unsafe-fixes", g).returncode == 0
    assert (
        g.read_bytes() == b"# -*- coding: latin-1 -*-\n# caf\xe9\nimport torch\nsd = torch.load(p, weights_only=True)\n"
    )


@pytest.mark.parametrize(
    "name,data,message",
    [
        ("syntax.py", b"def f(:\n    pass\n", "syntax error"),
        ("binary.py", b"\x7fELF\x00\x01\x02", "NUL bytes"),
        ("latin.py", b"x = '\xe9'\n", "cannot decode byte 0xe9"),
    ],
)
def test_unreadable_files_become_tl000_and_run_continues(tmp_path, run_cli, name, data, message):
    (tmp_path / name).write_bytes(data)
    (tmp_path / "train.py").write_text(BUGGY)
    r = run_cli("check", "--output-format", "json", tmp_path)
    assert r.returncode == 1
    items = json.loads(r.stdout)
    bad = [i for i in items if i["path"].endswith(name)]
    assert len(bad) == 1 and bad[0]["code"] == "TL000" and message in bad[0]["message"]
    assert any(i["code"] == "TL101" for i in items), "the other file was still checked"


def test_syntax_error_position(tmp_path, run_cli):
    (tmp_path / "s.py").write_text("import torch\nx = (1,\n")
    item = json.loads(run_cli("check", "--output-format", "json", tmp_path / "s.py").stdout)[0]
    assert item["code"] == "TL000" and item["line"] >= 2


def test_empty_and_latin1_declared_files_are_clean(tmp_path, run_cli):
    (tmp_path / "empty.py").write_bytes(b"")
    (tmp_path / "decl.py").write_bytes(b"# -*- coding: latin-1 -*-\nx = '\xe9'\n")
    r = run_cli("check", tmp_path)
    assert r.returncode == 0, r.stdout


def test_fix_never_writes_unparseable_or_changed_file(tmp_path):
    from torchlint.checker import write_atomic

    f = tmp_path / "a.py"
    f.write_bytes(b"x = 1\n")
    with pytest.raises(ValueError, match="changed on disk"):
        write_atomic(f, b"x = 0\n", b"x = 2\n")
    assert f.read_bytes() == b"x = 1\n"


def test_discovery_skips_ignored_and_default_dirs(tmp_path, run_cli):
    for d in (".venv", "node_modules", "build", "__pycache__", "generated", "src"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "t.py").write_text(BUGGY)
    (tmp_path / ".gitignore").write_text("generated/\n")
    out = json.loads(run_cli("check", "--output-format", "json", tmp_path).stdout)
    assert {os.path.basename(os.path.dirname(i["path"])) for i in out} == {"src"}


def test_jobs_give_identical_output(tmp_path, run_cli):
    for i in range(6):
        (tmp_path / f"t{i}.py").write_text(BUGGY)
    one = run_cli("check", "--extend-select", "TL601", "--output-format", "json", "-j", "1", tmp_path).stdout
    two = run_cli("check", "--extend-select", "TL601", "--output-format", "json", "-j", "2", tmp_path).stdout
    assert one == two and len(json.loads(one)) == 12


def test_text_output_has_no_colour_when_piped(project, run_cli):
    assert "\x1b[" not in run_cli("check", project).stdout


def test_explicit_directory_inside_excluded_area_is_walked(tmp_path, run_cli):
    """`torchlint check .venv/lib/.../pkg` checks pkg; excludes/gitignore apply below it."""
    (tmp_path / ".gitignore").write_text(".venv/\n")
    pkg = tmp_path / ".venv" / "lib" / "pkg"
    (pkg / "build").mkdir(parents=True)
    (pkg / "t.py").write_text(BUGGY)
    (pkg / "build" / "t.py").write_text(BUGGY)
    out = json.loads(run_cli("check", "--output-format", "json", pkg, cwd=tmp_path).stdout)
    assert {i["path"] for i in out} == {str(pkg / "t.py")}
    assert json.loads(run_cli("check", "--output-format", "json", ".", cwd=tmp_path).stdout) == []


def test_an_internal_error_on_one_file_is_a_finding_and_the_run_continues(tmp_path, monkeypatch, capsys):
    import torchlint.engine
    from torchlint.cli import main

    real = torchlint.engine.lint_bytes

    def broken_on_one_file(path, *args, **kwargs):
        if path.endswith("broken.py"):
            raise AssertionError("a bug of torchlint's")
        return real(path, *args, **kwargs)

    monkeypatch.setattr(torchlint.engine, "lint_bytes", broken_on_one_file)
    (tmp_path / "broken.py").write_text("x = 1\n")
    (tmp_path / "train.py").write_text(BUGGY)
    code = main(["check", "--no-cache", "-j", "1", "--output-format", "json", str(tmp_path)])
    items = json.loads(capsys.readouterr().out)
    assert code == 1
    bad = [i for i in items if i["path"].endswith("broken.py")]
    assert len(bad) == 1 and "internal error" in bad[0]["message"] and "AssertionError" in bad[0]["message"]
    assert any(i["code"] == "TL101" for i in items), "the other file was still checked"
