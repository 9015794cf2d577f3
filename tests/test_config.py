"""Configuration files and inline suppression."""

from __future__ import annotations

import json

import pytest

from selecting import extend_select
from test_cli import BUGGY
from torchlint import noqa
from torchlint.config import DEFAULT_EXCLUDE, Overrides, Selection, Settings, normalize_codes
from torchlint.config import _match as config_match
from torchlint.findings import Severity


def codes(run_cli, *args):
    r = run_cli("check", "--output-format", "json", *args)
    assert r.returncode in (0, 1), r.stderr
    return sorted(f["code"] for f in json.loads(r.stdout))


def test_pyproject_select_ignore_severity(tmp_path, run_cli):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.torchlint]\nextend-select = ["TL601"]\nignore = ["TL601"]\n'
        'severity = { TL101 = "info" }\n'
    )  # the ignore wins over the extend-select of the opt-in TL601
    (tmp_path / "t.py").write_text(BUGGY)
    out = json.loads(run_cli("check", "--output-format", "json", tmp_path).stdout)
    assert [(f["code"], f["severity"]) for f in out] == [("TL101", "info")]


def test_torchlint_toml_and_nearest_config_wins(tmp_path, run_cli):
    (tmp_path / "torchlint.toml").write_text('select = ["TL601"]\n')
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "pyproject.toml").write_text('[tool.torchlint]\nselect = ["TL101"]\n')
    (tmp_path / "a.py").write_text(BUGGY)
    (sub / "b.py").write_text(BUGGY)
    out = json.loads(run_cli("check", "--output-format", "json", tmp_path).stdout)
    assert {(f["path"].split("/")[-1], f["code"]) for f in out} == {("a.py", "TL601"), ("b.py", "TL101")}


def test_extend_select_exclude_and_per_file_ignores(tmp_path, run_cli):
    (tmp_path / "pyproject.toml").write_text(
        "[tool.torchlint]\n"
        'select = ["TL6"]\nextend-select = ["TL101"]\n'
        'extend-exclude = ["legacy"]\n'
        '[tool.torchlint.per-file-ignores]\n"tests/*" = ["TL601"]\n'
    )
    for d in ("legacy", "tests", "src"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "t.py").write_text(BUGGY)
    out = json.loads(run_cli("check", "--output-format", "json", tmp_path).stdout)
    got = sorted((f["path"].split("/")[-2], f["code"]) for f in out)
    assert got == [("src", "TL101"), ("src", "TL601"), ("tests", "TL101")]


def test_severity_prefixes_longest_match_wins(tmp_path, run_cli):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\ndependencies = ["torch>=2.1"]\n\n[tool.torchlint]\nextend-select = ["TL601"]\n'
        '[tool.torchlint.severity]\nALL = "info"\nTL1 = "warning"\nTL10 = "info"\nTL101 = "error"\nTL6 = "warning"\n'
    )
    (tmp_path / "t.py").write_text(BUGGY)
    out = json.loads(run_cli("check", "--output-format", "json", tmp_path).stdout)
    assert sorted((f["code"], f["severity"]) for f in out) == [("TL101", "error"), ("TL601", "warning")]
    (tmp_path / "pyproject.toml").write_text(extend_select("TL601") + '[tool.torchlint.severity]\nTL1 = "info"\n')
    out = json.loads(run_cli("check", "--output-format", "json", tmp_path).stdout)
    assert sorted((f["code"], f["severity"]) for f in out) == [("TL101", "info"), ("TL601", "warning")]


def test_severity_prefixes_resolve_per_code_and_the_editor_layer_wins():
    settings = Settings(severity={"TL1": Severity.INFO, "TL102": Severity.ERROR, "TL000": Severity.INFO})
    editor = Overrides(severity={"TL10": Severity.WARNING, "ALL": Severity.ERROR})
    assert settings.selection("a.py", CODES).severity == {
        "TL000": Severity.INFO,
        "TL101": Severity.INFO,
        "TL102": Severity.ERROR,
    }
    assert settings.selection("a.py", CODES, editor).severity == {
        "TL000": Severity.INFO,
        "TL101": Severity.WARNING,
        "TL102": Severity.WARNING,
        "TL201": Severity.ERROR,
        "TL601": Severity.ERROR,
        "TL602": Severity.ERROR,
    }


@pytest.mark.parametrize(
    "body,needle",
    [
        ('[tool.torchlint]\nselcet = ["TL1"]\n', "unknown key `selcet`"),
        ('[tool.torchlint]\nignore = ["TL999"]\n', "unknown rule code 'TL999'"),
        ('[tool.torchlint]\nseverity = { TL101 = "fatal" }\n', "must be error, warning or info"),
        ('[tool.torchlint]\nseverity = { TL9 = "info" }\n', "`severity`: unknown rule code 'TL9'"),
        ("[tool.torchlint\n", "invalid TOML"),
    ],
)
def test_bad_config_is_a_clear_error(tmp_path, run_cli, body, needle):
    (tmp_path / "pyproject.toml").write_text(body)
    (tmp_path / "t.py").write_text(BUGGY)
    r = run_cli("check", tmp_path)
    assert r.returncode == 2
    assert needle in r.stderr and "pyproject.toml" in r.stderr


def test_explicit_config_option(tmp_path, run_cli):
    cfg = tmp_path / "ci.toml"
    cfg.write_text('select = ["TL601"]\n')
    (tmp_path / "t.py").write_text(BUGGY)
    assert codes(run_cli, "--config", cfg, tmp_path / "t.py") == ["TL601"]
    r = run_cli("check", "--config", tmp_path / "missing.toml", tmp_path)
    assert r.returncode == 2 and "missing.toml" in r.stderr


NOQA_CASES = [
    ("sd = torch.load(p)  # noqa: TL601\n", []),
    ("sd = torch.load(p)  # noqa: TL101\n", ["TL601"]),
    ("sd = torch.load(p)  # noqa: TL101, TL601\n", []),
    ("sd = torch.load(p)  # noqa\n", []),
    ("sd = torch.load(  # noqa: TL601\n    p,\n)\n", []),
    ("sd = f(\n    torch.load(p),\n)  # noqa: TL601\n", ["TL601"]),
]


@pytest.mark.parametrize("line,want", NOQA_CASES)
def test_noqa(tmp_path, run_cli, line, want):
    f = tmp_path / "t.py"
    f.write_text("import torch\n" + line)
    assert codes(run_cli, "--extend-select", "TL601", f) == want


def test_noqa_on_first_line_of_statement(tmp_path, run_cli):
    f = tmp_path / "t.py"
    f.write_text("import torch\nsd = dict(  # noqa: TL601\n    a=torch.load(p),\n)\n")
    assert codes(run_cli, "--extend-select", "TL601", f) == []


def test_file_level_noqa(tmp_path, run_cli):
    f = tmp_path / "t.py"
    f.write_text("# torchlint: noqa: TL601\n" + BUGGY)
    assert codes(run_cli, "--extend-select", "TL601", f) == ["TL101"]
    f.write_text("# torchlint: noqa\n" + BUGGY)
    assert codes(run_cli, "--extend-select", "TL601", f) == []


CODES = ["TL101", "TL102", "TL201", "TL601", "TL602"]


def test_selection_layers_overrides_on_the_config_and_its_per_file_ignores(tmp_path):
    settings = Settings(
        select=["TL1", "TL6"],
        ignore=["TL102"],
        per_file_ignores={"tests/*": ["TL601"]},
        severity={"TL101": Severity.INFO, "TL601": Severity.WARNING},
        root=tmp_path,
    )
    assert settings.selection(tmp_path / "src" / "a.py", CODES) == Selection(
        ("TL101", "TL601", "TL602"), {"TL101": Severity.INFO, "TL601": Severity.WARNING}
    )
    assert settings.selection(tmp_path / "tests" / "a.py", CODES).codes == ("TL101", "TL602")
    editor = Overrides(select=["TL2", "TL60"], ignore=["TL602"], severity={"TL601": Severity.ERROR})
    assert settings.selection(tmp_path / "src" / "a.py", CODES, editor) == Selection(
        ("TL201", "TL601"), {"TL101": Severity.INFO, "TL601": Severity.ERROR}
    )
    assert settings.selection(tmp_path / "tests" / "a.py", CODES, editor).codes == ("TL201",)
    extended = Overrides(extend_select=["TL201"])
    assert settings.selection(tmp_path / "a.py", CODES, extended).codes == ("TL101", "TL201", "TL601", "TL602")


def test_a_select_on_top_replaces_the_configured_extend_select_too(tmp_path):
    """`--select TL1` (or the editor's select) replaces the whole configured selection, as in Ruff: a config's
    `extend-select = ["TL601"]` does not sneak TL601 back in; the override's own extend-select still adds."""
    settings = Settings(extend_select=["TL601"], root=tmp_path)
    assert "TL601" in settings.selection(tmp_path / "a.py", CODES).codes
    assert settings.selection(tmp_path / "a.py", CODES, Overrides(select=["TL1"])).codes == ("TL101", "TL102")
    both = Overrides(select=["TL1"], extend_select=["TL602"])
    assert settings.selection(tmp_path / "a.py", CODES, both).codes == ("TL101", "TL102", "TL602")


def test_codes_are_normalized_once_for_every_front_end():
    assert normalize_codes([" tl1", "all", "", "  ", "TL601 "]) == ["TL1", "ALL", "TL601"]


def test_noqa_grammar_reads_and_writes_the_same_comments():
    (c,) = noqa.comments("x = 1  # noqa: TL201,tl101")
    assert [(k.code, k.start, k.end) for k in c.codes] == [("TL201", 15, 20), ("TL101", 21, 26)]
    assert noqa.comment("x = 1  # NOQA").codes is None and noqa.comment("x = 1  # fine") is None
    assert noqa.with_code("x = 1", "TL101") == "x = 1  # noqa: TL101"
    assert noqa.with_code("x = 1  # noqa: TL201  # why", "TL101") == "x = 1  # noqa: TL201, TL101  # why"
    assert noqa.with_code("x = 1  # noqa: TL101", "TL101") is None
    assert noqa.with_code("x = 1  # noqa", "TL101") is None
    assert noqa.file_codes("# torchlint: noqa: TL601\nx = 1  # torchlint: noqa\n") == {"TL601"}
    assert noqa.file_codes("  # torchlint: noqa\n") is None


def test_exclusion_answers_as_matching_each_pattern():
    """Settings.excluded's set lookup for bare names answers as `_match` over every pattern does."""
    patterns = (*DEFAULT_EXCLUDE, "legacy/", "docs/*.py", "gen_*", "a/b", "[ab]uild", "*.ipynb", "x?")
    paths = [
        "train.py",
        ".git",
        "src/.git/hooks/x.py",
        "venvs/x.py",
        "pkg/venv/lib.py",
        "legacy",
        "legacy/old.py",
        "docs/conf.py",
        "docs/sub/conf.py",
        "gen_models.py",
        "a/b/c.py",
        "a/bc.py",
        "build/x.py",
        "auild",
        "nb.ipynb",
        "xy/z.py",
        "xyz.py",
        ".",
        "src/node_modules",
        "node_modules_old/a.py",
    ]
    settings = Settings(exclude=list(patterns))
    for path in paths:
        assert settings.excluded(path) == any(config_match(path, p) for p in patterns), path
    assert settings.excluded("pkg/venv/lib.py") and not settings.excluded("venvs/x.py")
