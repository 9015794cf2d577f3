"""Cross-file checkpoint consumers (checkpoint_consumers.py): whether a state dict is saved at all, and how the
project's loaders in any file read it back."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from torchlint.engine.context import FileContext
from torchlint.engine.runner import lint_text
from torchlint.engine.torch.checkpoint_consumers import Verdict
from torchlint.registry import rules

TRAIN = """\
import torch
import utils

def main():
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 2))
    state = {"model": model.state_dict(), "epoch": 1}
    utils.save_on_master(state, "checkpoint.pth")
    check(model.state_dict())
"""
UTILS = """\
import torch

def save_on_master(obj, path):
    torch.save(obj, path)
"""
LOADERS = {
    "bare": "import torch\n\ndef load():\n    net = torch.nn.Linear(4, 2)\n"
    "    net.load_state_dict(torch.load('checkpoint.pth')['model'])\n",
    "strips": "import torch\n\ndef load():\n    net = torch.nn.Linear(4, 2)\n    sd = torch.load('checkpoint.pth')['model']\n"
    "    net.load_state_dict({k.replace('module.', ''): v for k, v in sd.items()})\n",
    "wrapped": "import torch\n\ndef load():\n    net = torch.nn.DataParallel(torch.nn.Linear(4, 2))\n"
    "    net.load_state_dict(torch.load('checkpoint.pth')['model'])\n",
    "unknown": "import torch\n\ndef load(net):\n    net.load_state_dict(torch.load('checkpoint.pth')['model'])\n",
    "other_file": "import torch\n\ndef load():\n    net = torch.nn.Linear(4, 2)\n"
    "    net.load_state_dict(torch.load('pretrained.pth'))\n",
}


def _project(tmp_path: Path, loader: str) -> FileContext:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\nversion = '0'\n")
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "utils.py").write_text(UTILS)
    (tmp_path / "evaluate.py").write_text(LOADERS[loader])
    path = tmp_path / "train.py"
    return FileContext(str(path), TRAIN, cst.parse_module(TRAIN))


def _state_dict_calls(ctx: FileContext) -> list[cst.Call]:
    return [
        s.call
        for s in ctx.call_sites.calls
        if isinstance(s.call.func, cst.Attribute) and s.call.func.attr.value == "state_dict"
    ]


@pytest.mark.parametrize(
    "loader,verdicts",
    [
        ("bare", [Verdict.INCOMPATIBLE]),
        ("strips", [Verdict.COMPATIBLE]),
        ("wrapped", [Verdict.COMPATIBLE]),
        ("unknown", [Verdict.UNKNOWN]),
        ("other_file", []),  # loads another file: not a consumer
    ],
)
def test_loaders_in_other_files_are_judged(tmp_path, loader, verdicts):
    ctx = _project(tmp_path, loader)
    (main,) = [f for f, _ in ctx.call_sites.functions["main"]]
    saved, checked = _state_dict_calls(ctx)
    save = ctx.checkpoint_consumers.saved(saved, main)
    assert save is not None  # through a dict, a name and a project helper that calls torch.save
    assert ctx.checkpoint_consumers.saved(checked, main) is None  # handed to a check, not saved
    found = ctx.checkpoint_consumers.loaders(save)
    assert [lo.verdict for lo in found] == verdicts


@pytest.mark.parametrize("loader,reported", [("bare", True), ("strips", False), ("unknown", False)])
def test_tl407_reports_only_what_a_loader_proves(tmp_path, loader, reported):
    ctx = _project(tmp_path, loader)
    found = lint_text(ctx.path, TRAIN, [rules()["TL407"]]).findings
    assert [f.line for f in found] == ([6] if reported else [])
