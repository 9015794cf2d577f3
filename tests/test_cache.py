"""The findings cache keys on everything that decides a file's findings, and `--show-settings`
reports what `check` uses (one resolver for both)."""

from __future__ import annotations

import json

import pytest

TRACED = "import torch\ntraced = torch.jit.trace(model, example)\n"  # TL701 from torch 2.5 on


def _project(root, torch_version: str | None, content: str = TRACED):
    root.mkdir(parents=True)
    table = f"[tool.torchlint]\ntorch-version = '{torch_version}'\n" if torch_version else ""
    (root / "pyproject.toml").write_text(f"[project]\nname = 'p'\n{table}")
    (root / "train.py").write_text(content)
    return root / "train.py"


def _codes(run_cli, path, *args):
    r = run_cli("check", "--select", "TL701", "--output-format", "json", *args, path, cwd=path.parent)
    return [f["code"] for f in json.loads(r.stdout)]


@pytest.fixture
def shared_cache(tmp_path, monkeypatch):
    """One cache directory for every run of the test (the CLI inherits the environment)."""
    monkeypatch.setenv("TORCHLINT_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_same_content_under_different_target_torch_versions_is_not_one_entry(tmp_path, run_cli, shared_cache):
    old = _project(tmp_path / "old", "2.4")
    new = _project(tmp_path / "new", "2.5")
    assert _codes(run_cli, old) == []
    assert _codes(run_cli, new) == ["TL701"]  # was [] from the old project's entry
    assert _codes(run_cli, old) == []
    assert any(shared_cache.rglob("*")), "the runs wrote cache entries"


def test_changing_the_target_torch_version_of_a_project_is_a_miss(tmp_path, run_cli, shared_cache):
    train = _project(tmp_path / "p", "2.4")
    assert _codes(run_cli, train) == []
    (train.parent / "pyproject.toml").write_text("[tool.torchlint]\ntorch-version = '2.5'\n")
    assert _codes(run_cli, train) == ["TL701"]


def test_the_same_file_in_another_project_is_checked_with_that_projects_facts(tmp_path, run_cli, shared_cache):
    """A file's findings depend on the project around it (here: which torch its requirements declare)."""
    a = _project(tmp_path / "a", None)
    b = _project(tmp_path / "b", None)
    (a.parent / "requirements.txt").write_text("torch==2.4\n")
    (b.parent / "requirements.txt").write_text("torch>=2.6\n")
    assert _codes(run_cli, a) == []
    assert _codes(run_cli, b) == ["TL701"]


def test_per_file_ignores_and_selection_are_part_of_the_key(tmp_path, run_cli, shared_cache):
    train = _project(tmp_path / "p", "2.5")
    assert _codes(run_cli, train) == ["TL701"]
    (train.parent / "pyproject.toml").write_text(
        "[tool.torchlint]\ntorch-version = '2.5'\n[tool.torchlint.per-file-ignores]\n'train.py' = ['TL701']\n"
    )
    assert _codes(run_cli, train) == []


def _nested(tmp_path):
    """A repository whose config sets torch 2.4, with a nested package that has its own pyproject.toml
    (a project root) without torchlint settings: the repository's settings are the nearest."""
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / "pyproject.toml").write_text("[tool.torchlint]\ntorch-version = '2.4'\n")
    (root / "pkg" / "pyproject.toml").write_text("[project]\nname = 'pkg'\ndependencies = ['torch>=2.6']\n")
    (root / "pkg" / "train.py").write_text(TRACED)
    return root


def test_show_settings_and_check_use_the_same_target_torch_under_a_nested_pyproject(tmp_path, run_cli):
    root = _nested(tmp_path)
    train = root / "pkg" / "train.py"
    shown = run_cli("check", "--show-settings", train, cwd=root).stdout
    assert "target torch: 2.4 (torch-version setting)" in shown
    assert _codes(run_cli, train, "--no-cache") == []  # 2.4: torch.jit.trace is not deprecated yet
    (root / "pyproject.toml").write_text("[tool.torchlint]\ntorch-version = '2.5'\n")
    assert "target torch: 2.5 (torch-version setting)" in run_cli("check", "--show-settings", train, cwd=root).stdout
    assert _codes(run_cli, train, "--no-cache") == ["TL701"]


def test_the_resolver_gives_check_and_show_settings_one_answer(tmp_path):
    from torchlint import checker
    from torchlint.config import ConfigResolver
    from torchlint.registry import known_codes

    root = _nested(tmp_path)
    resolver = ConfigResolver(known_codes())
    resolved = resolver.resolve(root / "pkg" / "train.py")
    assert (str(resolved.torch), resolved.torch.source) == ("2.4", "torch-version setting")
    (job,) = checker.plan([root / "pkg" / "train.py"], resolver, "check")
    assert job.torch_version == "2.4" and job.codes == resolved.selection.codes


def test_the_language_server_lints_with_the_target_check_uses(tmp_path):
    from torchlint.config import ConfigResolver
    from torchlint.lsp.settings import ClientSettings, setup
    from torchlint.registry import known_codes

    root = _nested(tmp_path)
    lint_setup = setup(ConfigResolver(known_codes()), ClientSettings(), str(root / "pkg" / "train.py"))
    assert lint_setup.torch_version == "2.4"
