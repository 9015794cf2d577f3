"""TL402 ddp-without-process-group beyond its embedded examples."""

from __future__ import annotations

DDP = "from torch.nn.parallel import DistributedDataParallel as DDP\n"


def test_tl402_reports_once_and_respects_launchers(findings):
    src = DDP + "from torch.utils.data import DistributedSampler\ns = DistributedSampler(ds)\nm = DDP(net)\n"
    assert len(findings(src, "TL402")) == 1
    assert findings("import lightning\n" + src, "TL402") == []
    assert findings(src + "torch.distributed.init_process_group('gloo')\n", "TL402") == []


TASK = """\
import torch


class Task:
    def __init__(self, model):
        self.model = model

    def wrap(self, device):
        self.model = torch.nn.parallel.DistributedDataParallel(self.model, device_ids=[device])
"""
SETUP = """\
import torch


def _init(backend):
    if backend:
        torch.distributed.init_process_group(backend)


def init_device(args):
    _init(args.backend)
    return args.device
"""


def _project(tmp_path, files: dict[str, str], linted: str = "pkg/task.py") -> list[int]:
    from torchlint.engine import lint_text
    from torchlint.registry import rules

    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    for name, text in {"pkg/task.py": TASK, "pkg/distributed.py": SETUP, **files}.items():
        (tmp_path / name).write_text(text)
    path = tmp_path / linted
    return [f.line for f in lint_text(str(path), path.read_text(), [rules()["TL402"]]).findings]


def test_tl402_method_reached_after_a_set_up_helper_in_another_file_is_silent(tmp_path):
    # open_clip: main.py calls `init_distributed_device(args)` (its helper calls init_process_group) and later
    # `task.prepare_distributed(...)`, whose file neither main.py's imports nor distributed.py reach
    main = (
        "from pkg.distributed import init_device\nfrom pkg.task import Task\n\n"
        "def main(args, model):\n    device = init_device(args)\n    task = Task(model)\n"
        "    if args.distributed:\n        task.wrap(device)\n"
    )
    assert _project(tmp_path, {"main.py": main}) == []


def test_tl402_method_reached_before_any_set_up_is_reported(tmp_path):
    main = (
        "from pkg.distributed import init_device\nfrom pkg.task import Task\n\n"
        "def main(args, model):\n    task = Task(model)\n    task.wrap(0)\n    init_device(args)\n\nmain(None, None)\n"
    )
    assert _project(tmp_path, {"main.py": main}) == [9]


LOADER = "from torch.utils.data import DistributedSampler\n\ndef get_loader(ds):\n    return DistributedSampler(ds)\n"


def test_tl402_library_function_with_unknown_callers_in_a_project_that_sets_up_is_silent(tmp_path):
    # open_clip's audio_data: the dataset function is handed on as a value (`return get_loader`), its callers
    # unknown; the project sets the process group up (pkg/distributed.py): not proven missing
    files = {
        "pkg/data.py": LOADER,
        "pkg/factory.py": "from pkg.data import get_loader\n\ndef pick():\n    return get_loader\n",
        "main.py": "from pkg.distributed import init_device\nfrom pkg.factory import pick\n\n"
        "def main(args, ds):\n    init_device(args)\n    pick()(ds)\n",
    }
    assert _project(tmp_path, files, "pkg/data.py") == []
