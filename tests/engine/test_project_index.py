"""The project index: modules, classes and functions read across files, and what depends on what."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from fixture_expectations import FIXTURES
from torchlint.engine.semantic import inference
from torchlint.engine.semantic.project import Project, find_root
from torchlint.engine.semantic.target_version import lowest_allowed, resolve

BASE = "from torch import nn\n\n\nclass Base(nn.Module):\n    pass\n"
NET = (
    "import torch\n\nfrom base import Base\n\n\nclass Net(Base):\n    def __init__(self):\n"
    "        super().__init__()\n        self.scale = torch.ones(4)\n"
)


def _project(tmp_path: Path, files: dict[str, str]) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\nversion = '0'\n")
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def test_root_is_the_nearest_marker(tmp_path):
    root = _project(tmp_path, {"pkg/sub/mod.py": ""})
    assert find_root(root / "pkg" / "sub" / "mod.py") == root


def test_module_names_for_packages_src_layout_and_scripts(tmp_path):
    root = _project(
        tmp_path,
        {
            "src/kit/__init__.py": "",
            "src/kit/models/__init__.py": "",
            "src/kit/models/net.py": "",
            "scripts/run.py": "",
        },
    )
    project = Project(root)
    assert project.module_name(root / "src/kit/models/net.py") == ("kit.models.net", "kit.models")
    assert project.module_name(root / "src/kit/models/__init__.py") == ("kit.models", "kit.models")
    assert project.module_name(root / "scripts/run.py") == ("run", "")  # no __init__: a script folder


def test_packages_resolve_from_the_folders_pyproject_hands_setuptools(tmp_path):
    files = {"pkg/kit/__init__.py": "", "pkg/kit/models.py": "from .base import Base\n\n\nclass Net(Base):\n    pass\n"}
    root = _project(tmp_path, {**files, "pkg/kit/base.py": BASE, "notes/run.py": ""})
    assert not inference.is_module_class(Project(root), "kit.models.Net", root / "notes")  # no package root named
    toml = "[project]\nname = 'p'\nversion = '0'\n[tool.setuptools]\npackage-dir = {'' = 'pkg'}\n"
    (root / "pyproject.toml").write_text(toml)
    project = Project(root)
    assert project.source_roots == (root, root / "src", root / "pkg")
    assert inference.is_module_class(project, "kit.models.Net", root / "notes")
    (root / "pyproject.toml").write_text(toml.replace("package-dir = {'' = 'pkg'}", "packages.find.where = ['../x']"))
    assert Project(root).source_roots == (root, root / "src")  # outside the project: not followed


def test_classes_resolve_through_relative_imports_and_reexports(tmp_path):
    root = _project(
        tmp_path,
        {
            "kit/__init__.py": "from .models import Net\n",
            "kit/models.py": "from .base import Base\n\n\nclass Net(Base):\n    pass\n",
            "kit/base.py": BASE,
        },
    )
    project = Project(root)
    assert inference.is_module_class(project, "kit.Net", root)
    assert not inference.is_module_class(project, "kit.models.Missing", root)


def test_function_summaries_say_what_they_return(tmp_path):
    root = _project(
        tmp_path,
        {
            "utils.py": (
                "import torch\nfrom base import Base\n\n\ndef make():\n    m = Base()\n    return m.to('cpu')\n\n\n"
                "def opt(m):\n    return torch.optim.SGD(m.parameters(), lr=0.1)\n\n\n"
                "def state(m):\n    return {'model': m.state_dict()}\n"
            ),
            "base.py": BASE,
        },
    )
    project = Project(root)
    kinds = {name: inference.call_kind(project, f"utils.{name}", root).name for name in ("make", "opt", "state")}
    assert kinds == {"make": "MODEL", "opt": "OPTIMIZER", "state": "CONTAINER"}


def test_editing_a_base_class_in_another_file_invalidates_the_cache(tmp_path, run_cli):
    root = _project(tmp_path, {"base.py": BASE, "net.py": NET})

    def codes():  # the cache lives in the working directory: .torchlint_cache/ (TL201 is opt-in: selected)
        out = run_cli("check", "--select", "TL201", "--output-format", "json", root / "net.py", cwd=root)
        return [f["code"] for f in json.loads(out.stdout)]

    assert codes() == ["TL201"]
    assert codes() == ["TL201"]  # from the cache
    (root / "base.py").write_text("class Base:\n    pass\n")  # no longer a module: no finding in net.py
    assert codes() == []


def test_a_new_entry_point_that_sets_up_the_process_group_invalidates_the_cache(tmp_path, run_cli):
    """TL402 on a library module rests on a scan of every project file: a file created later that sets up
    the process group must change the cached verdict, though no file the lint read has changed."""
    root = tmp_path / "p"
    shutil.copytree(FIXTURES / "projects" / "ddp_no_init", root)
    trainer = root / "trainkit" / "trainer.py"

    def codes():  # the cache lives in the working directory: .torchlint_cache/
        out = run_cli("check", "--output-format", "json", trainer, cwd=root)
        return [f["code"] for f in json.loads(out.stdout)]

    assert codes() == ["TL402"]
    assert codes() == ["TL402"]  # from the cache
    entry = (FIXTURES / "projects" / "ddp_entry" / "clean_main.py").read_text(encoding="utf-8")
    (root / "launch.py").write_text(entry)  # imports the trainer after init_process_group
    assert codes() == []
    (root / "launch.py").unlink()
    assert codes() == ["TL402"]


def test_declared_dependencies_give_the_target_torch_version(tmp_path):
    (tmp_path / "requirements.txt").write_text("numpy\ntorch==2.4.1\n")
    assert str(resolve(tmp_path)) == "2.4"
    (tmp_path / "pyproject.toml").write_text("[tool.torchlint]\ntorch-version = '2.2'\n")
    found = resolve(tmp_path)
    assert (str(found), found.source) == ("2.2", "torch-version setting")
    assert lowest_allowed("torch>=2.1,<3") == (2, 1) and lowest_allowed("torch") is None


def test_show_settings_prints_the_target_torch_and_its_source(tmp_path, run_cli):
    root = _project(tmp_path, {"train.py": "import torch\n"})
    (root / "requirements.txt").write_text("torch>=2.3,<2.5\n")
    out = run_cli("check", "--show-settings", root / "train.py", cwd=root).stdout
    assert "target torch: 2.3 (requirements.txt)" in out


def _notebook(*cells: str) -> str:
    code = [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": c} for c in cells]
    return json.dumps({"cells": code, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def test_notebooks_are_read_as_the_programs_that_call_a_library(tmp_path):
    root = _project(
        tmp_path,
        {
            "kit/__init__.py": "",
            "kit/trainer.py": "def fit(model):\n    return model\n",
            "drive.ipynb": _notebook(
                "%matplotlib inline\nimport torch.distributed as dist\nfrom kit.trainer import fit",
                "dist.init_process_group('gloo')\nfit(None)",
            ),
            "broken.ipynb": "{not json",
            ".ipynb_checkpoints/drive-checkpoint.ipynb": _notebook("dist.init_process_group('gloo')"),
        },
    )
    project = Project(root)
    notebook = root / "drive.ipynb"
    assert notebook in project.files() and root / ".ipynb_checkpoints/drive-checkpoint.ipynb" not in project.files()
    assert [s.path for s in project.calling("init_process_group")] == [notebook]
    assert [s.path for s in project.importers(root / "kit/trainer.py")] == [notebook]
    assert project.summary(root / "broken.ipynb") is None  # not a notebook: nothing to read, no crash


def test_the_index_does_not_read_a_fifo(tmp_path):
    """A FIFO named like a module would block the index's read forever (the hostile-tree reliability test hung
    once TL601 asked which files save): the index reads regular files only."""
    import os
    import signal

    root = _project(tmp_path, {"train.py": "import torch\ntorch.save({}, 'a.pt')\n"})
    os.mkfifo(root / "fifo.py")

    class Blocked(BaseException):  # not an OSError: the index's read would swallow that
        pass

    def blocked(*_: object) -> None:
        raise Blocked("the index read a FIFO")

    previous = signal.signal(signal.SIGALRM, blocked)
    signal.alarm(30)
    try:
        callers = Project(root).calling("save")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert callers is not None and [s.path.name for s in callers] == ["train.py"]


@pytest.mark.parametrize(
    "requirement,ceiling",
    [
        ("torch==1.7.1\n", (1, 7)),
        ("torch>=1.4,<1.8\n", (1, 7)),
        ("torch~=1.7.0\n", (1, 7)),
        ("torch>=1.0,<=1.11\n", (1, 11)),
        ("torch>=0.4.0\n", None),  # newer releases admitted: no ceiling
    ],
)
def test_the_newest_torch_a_project_admits(tmp_path, requirement, ceiling):
    (tmp_path / "requirements.txt").write_text(requirement)
    assert resolve(tmp_path).ceiling == ceiling


def test_tl704_reads_the_newest_torch_the_project_admits(tmp_path):
    """`torch==1.7.1` pins torchvision 0.8, whose API is `pretrained=`; `torch>=0.4.0` admits 2.x too."""
    from torchlint.engine import lint_text
    from torchlint.registry import rules

    src = "import torchvision\nm = torchvision.models.resnet18(pretrained=True)\n"
    found = {}
    for name, requirements in (
        ("pinned", "torch==1.7.1\ntorchvision==0.8.2\n"),
        ("open", "torch>=0.4.0\ntorchvision\n"),
    ):
        root = tmp_path / name
        (root / ".git").mkdir(parents=True)
        (root / "requirements.txt").write_text(requirements)
        (root / "train.py").write_text(src)
        found[name] = lint_text(str(root / "train.py"), src, [rules()["TL704"]]).findings
    assert not found["pinned"] and found["open"]


def test_the_admitted_range_reaches_the_check_jobs(tmp_path, run_cli):
    """`check` hands each job the resolved target: a range must arrive as a range (`0.4..`), not as the exact
    floor (which once silenced TL704 for `torch>=0.4.0`)."""
    src = "import torchvision\nm = torchvision.models.resnet18(pretrained=True)\n"
    for name, requirements in (("pinned", "torch==1.7.1\n"), ("open", "torch>=0.4.0\n")):
        root = tmp_path / name
        (root / ".git").mkdir(parents=True)
        (root / "requirements.txt").write_text(requirements)
        (root / "train.py").write_text(src)
    out = run_cli("check", "--no-cache", "--select", "TL704", "--output-format", "json", tmp_path).stdout
    assert [f["path"].split("/")[-2] for f in json.loads(out)] == ["open"]
