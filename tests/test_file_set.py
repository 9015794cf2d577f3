"""One file set: the CLI's walk, the project index and the editor's "lint workspace" skip the same files."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from torchlint.config import ConfigResolver
from torchlint.discovery import discover
from torchlint.engine.semantic import project as project_module
from torchlint.engine.semantic.project import Project
from torchlint.engine.semantic.target_version import installed
from torchlint.registry import known_codes

USES = "import torch\nfrom train import step\n"
# An environment's own files: a launcher that would make every cross-file question slow, and answers wrong.
ENV_FILE = "import torch.distributed as dist\nfrom train import step\ndist.init_process_group('nccl')\n"


def _tree(root: Path, files: dict[str, str]) -> Path:
    (root / "pyproject.toml").write_text("[project]\nname = 'p'\nversion = '0'\n")
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _checked(root: Path) -> set[str]:
    return {c.path.relative_to(root).as_posix() for c in discover([root], ConfigResolver(known_codes()))}


def _indexed(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in Project(root).files()}


@pytest.mark.parametrize(
    ("files", "skipped"),
    [
        # a git-ignored virtual environment named `env/`
        ({".gitignore": "env/\n", "env/pyvenv.cfg": "home = /usr\n", "env/lib/site.py": ENV_FILE}, "env/lib/site.py"),
        # an environment nothing ignores, known only by its pyvenv.cfg
        ({"myenv/pyvenv.cfg": "home = /usr\n", "myenv/lib/x.py": ENV_FILE}, "myenv/lib/x.py"),
        # a conda environment
        ({".conda/conda-meta/history": "", ".conda/lib/x.py": ENV_FILE}, ".conda/lib/x.py"),
        # installed packages outside any environment folder
        ({"vendor/lib/site-packages/pkg/x.py": ENV_FILE}, "vendor/lib/site-packages/pkg/x.py"),
        # a folder excluded in pyproject.toml
        ({"pyproject.toml": "[tool.torchlint]\nextend-exclude = ['data']\n", "data/gen.py": ENV_FILE}, "data/gen.py"),
        # the repository's .git/info/exclude
        ({".git/info/exclude": "scratch/\n", "scratch/x.py": ENV_FILE}, "scratch/x.py"),
    ],
)
def test_neither_checked_nor_indexed(tmp_path, files, skipped):
    root = _tree(tmp_path, {"train.py": "def step():\n    pass\n", "main.py": USES, **files})
    assert "main.py" in _checked(root) and "main.py" in _indexed(root)
    assert skipped not in _checked(root)
    assert skipped not in _indexed(root)
    project = Project(root)
    assert [s.path.name for s in project.importers(root / "train.py")] == ["main.py"]
    assert project.calling("init_process_group") == []


def test_an_environment_named_on_the_command_line_is_walked(tmp_path):
    root = _tree(tmp_path, {"env/pyvenv.cfg": "", "env/lib/x.py": "", "env/lib/inner/pyvenv.cfg": ""})
    (root / "env/lib/inner/y.py").write_text("")
    found = {c.path.name for c in discover([root / "env"], ConfigResolver(known_codes()))}
    assert found == {"x.py"}  # the environment inside it is still one


def test_target_version_reads_an_environment_of_any_name(tmp_path):
    root = _tree(tmp_path, {"myenv/pyvenv.cfg": "", "myenv/lib/python3.12/site-packages/torch-2.3.1.dist-info/x": ""})
    found = installed(root)
    assert found is not None and found.pair == (2, 3) and found.source == "installed in myenv/"


def test_torchlint_s_own_torch_read_from_its_dist_info_as_importlib_metadata_answers(tmp_path, monkeypatch):
    from importlib import metadata

    from torchlint.engine.semantic import target_version

    assert target_version._listed_torch() == metadata.version("torch")  # this environment: the plain case
    plain = tmp_path / "plain"
    for folder in ("torch-2.1.2.dist-info", "torchvision-0.16.0.dist-info", "torch_utils"):
        (plain / folder).mkdir(parents=True)
    monkeypatch.setattr("sys.path", ["", str(tmp_path / "missing"), str(plain)])
    monkeypatch.chdir(tmp_path)
    assert target_version._listed_torch() == "2.1.2"
    (plain / "torch-2.0.0.dist-info").mkdir()  # two: importlib.metadata decides
    assert target_version._listed_torch() is None
    monkeypatch.setattr("sys.path", [str(tmp_path / "missing")])
    assert target_version._listed_torch() is None


def test_over_the_limit_reported_once_never_truncated(tmp_path, monkeypatch, caplog):
    root = _tree(tmp_path, {f"m{i}.py": "import train\ntrain.step()\n" for i in range(6)})
    (root / "train.py").write_text("def step():\n    pass\n")
    monkeypatch.setattr(project_module, "LIMIT", 5)
    project = Project(root)
    with caplog.at_level(logging.WARNING, logger="torchlint.project"):
        assert len(project.files()) == 7  # every file, not the first LIMIT of a walk
        assert project.importers(root / "train.py") is None  # unknown: rules stay silent
        assert project.calling("step") is None
        project.forget_files()
        project.files()
    assert [r.getMessage().count("project index limited to 5 files") for r in caplog.records] == [1]


def test_a_folder_s_gitignore_applies_below_it_only(tmp_path):
    """Not to a sibling whose name starts with the folder's (`src` and `src2`), nor above it."""
    files = {
        "src/.gitignore": "gen.py\nsub/\n",
        "src/gen.py": "",
        "src/keep.py": "",
        "src/deep/gen.py": "",
        "src/sub/x.py": "",
        "src2/gen.py": "",
        "src2/sub/x.py": "",
        "gen.py": "",
    }
    root = _tree(tmp_path, files)
    found = {c.path.relative_to(root).as_posix() for c in discover([root], ConfigResolver(known_codes()))}
    assert found == {"src/keep.py", "src2/gen.py", "src2/sub/x.py", "gen.py"}
