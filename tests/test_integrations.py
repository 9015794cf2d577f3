"""pre-commit and flake8 integrations, run for real."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from selecting import extend_select
from test_cli import BUGGY

BIN = Path(sys.executable).parent
PRE_COMMIT = shutil.which("pre-commit", path=str(BIN)) or shutil.which("pre-commit") or str(BIN / "pre-commit")
README = Path(__file__).resolve().parents[1] / "README.md"


def test_flake8_select_tl(tmp_path):
    (tmp_path / "pyproject.toml").write_text(extend_select("TL601"))  # flake8's `TL` runs what torchlint selects
    f = tmp_path / "train.py"
    f.write_text(BUGGY)
    r = subprocess.run([str(BIN / "flake8"), "--select", "TL", str(f)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1, r.stderr
    lines = r.stdout.splitlines()
    assert any(":5:1: TL101 " in l for l in lines), r.stdout
    assert any(":8:6: TL601 " in l for l in lines), r.stdout


def test_flake8_noqa_is_respected(tmp_path):
    (tmp_path / "pyproject.toml").write_text(extend_select("TL601"))
    f = tmp_path / "t.py"
    f.write_text("import torch\nsd = torch.load(p)  # noqa: TL601\n")
    r = subprocess.run([str(BIN / "flake8"), "--select", "TL", str(f)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout == ""


def test_flake8_honours_per_file_ignores(tmp_path):
    """flake8 selects rules for a file exactly as `torchlint check` does, per-file-ignores included."""
    (tmp_path / "pyproject.toml").write_text(
        extend_select("TL601") + '[tool.torchlint.per-file-ignores]\n"tests/*" = ["TL601"]\n'
    )
    for d in ("tests", "src"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "train.py").write_text(BUGGY)
    r = subprocess.run(
        [str(BIN / "flake8"), "--select", "TL", "tests", "src"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 1, r.stderr
    found = sorted((line.split("/")[0], line.split()[1]) for line in r.stdout.splitlines())
    assert found == [("src", "TL101"), ("src", "TL601"), ("tests", "TL101")], r.stdout


def _git(cwd, *args):
    subprocess.run(
        ["git", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        env={
            **os.environ,
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@t",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@t",
        },
    )


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory, pytestconfig):
    """A committed snapshot of this checkout (pre-commit clones hooks by path) and a shared hook cache."""
    base = tmp_path_factory.mktemp("pre-commit")
    src = base / "torchlint-src"
    shutil.copytree(
        pytestconfig.rootpath,
        src,
        ignore=shutil.ignore_patterns(
            ".git", ".venv*", "node_modules", "*.egg-info", "build", "__pycache__", ".pytest_cache", "extension"
        ),
    )
    _git(src, "init", "-q")
    _git(src, "add", "-A")
    _git(src, "commit", "-qm", "snapshot")
    return src, base / "pc-home"


@pytest.mark.parametrize("hook", ["torchlint", "torchlint-fix"])
def test_pre_commit_try_repo(tmp_path, hook_repo, hook):
    """`pre-commit try-repo` installs torchlint from this checkout and runs the hook."""
    src, home = hook_repo
    work = tmp_path / "user-repo"
    work.mkdir()
    _git(work, "init", "-q")
    (work / "train.py").write_text(BUGGY)
    (work / "pyproject.toml").write_text(extend_select("TL601"))  # its unsafe fix must be seen and skipped
    _git(work, "add", "train.py", "pyproject.toml")
    r = subprocess.run(
        [PRE_COMMIT, "try-repo", str(src), hook, "--all-files", "--verbose"],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "PRE_COMMIT_HOME": str(home)},
    )
    assert r.returncode == 1, r.stdout + r.stderr  # findings (check) / files modified (fix)
    if hook == "torchlint":
        assert "TL101" in r.stdout and "TL601" in r.stdout
    else:
        fixed = (work / "train.py").read_text()
        assert "opt.zero_grad()" in fixed  # a safe fix
        assert "weights_only=True" not in fixed  # an unsafe one: the hook runs plain --fix


def _readme_configs() -> list[str]:
    """The `.pre-commit-config.yaml` examples of the README's pre-commit section, as written."""
    section = README.read_text(encoding="utf-8").split("## pre-commit and flake8", 1)[1].split("\n## ", 1)[0]
    return [block for block in re.findall(r"```yaml\n(.*?)```", section, flags=re.S) if "repos:" in block]


@pytest.mark.parametrize("form", ["local", "clone"])
def test_the_readme_pre_commit_config_runs_from_a_fresh_clone(tmp_path, hook_repo, form):
    """Each documented config, with only its placeholders filled in, runs `pre-commit run --all-files`."""
    src, home = hook_repo
    (config,) = [c for c in _readme_configs() if ("repo: local" in c) == (form == "local")]
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=src, capture_output=True, text=True, check=True)
    config = config.replace("/path/to/torchlint", str(src)).replace("COMMIT", head.stdout.strip())
    work = tmp_path / "user-repo"
    work.mkdir()
    _git(work, "init", "-q")
    (work / ".pre-commit-config.yaml").write_text(config)
    (work / "train.py").write_text(BUGGY)
    (work / "ok.py").write_text("import torch\n")
    _git(work, "add", "-A")
    r = subprocess.run(
        [PRE_COMMIT, "run", "--all-files", "--verbose"],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "PRE_COMMIT_HOME": str(home), "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"},
    )
    assert r.returncode == 1, r.stdout + r.stderr  # the findings (check) / the file it fixed
    assert "train.py:5:1: TL101" in r.stdout and "ok.py" not in r.stdout, r.stdout
