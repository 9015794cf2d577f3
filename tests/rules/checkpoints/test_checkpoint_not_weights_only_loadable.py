"""TL604 checkpoint-not-weights-only-loadable beyond its embedded examples."""

from __future__ import annotations

from torchlint.engine import lint_text
from torchlint.engine.semantic import project as project_module
from torchlint.findings import Applicability
from torchlint.registry import rules

SRC = (
    "import os\nimport torch\n"
    "model = torch.nn.Linear(2, 2)\noptimizer = torch.optim.Adam(model.parameters())\n"
    "def save(out):\n"
    "    state = {'model': model.state_dict(), 'optimizer': optimizer}\n"
    "    torch.save(state, os.path.join(out, 'last.pt'))\n"
    "def resume(out):\n"
    "    ckpt = torch.load(os.path.join(out, 'last.pt'))\n"
    "    return ckpt\n"
)


def test_tl604_dict_bound_to_a_name_and_a_joined_path(findings):
    (f,) = findings(SRC, "TL604")
    assert f.line == 9 and "an optimizer object" in f.message and "line 7" in f.message


def test_tl604_only_for_targets_with_the_weights_only_default():
    found = lint_text("m.py", SRC, [rules()["TL604"]], torch_version="2.5").findings
    assert found == []  # before 2.6 the default unpickles: TL601's business


def test_tl604_look_alikes_are_silent(findings):
    src = (
        "import torch\nmodel = torch.nn.Linear(2, 2)\n"
        "torch.save(model, 'm.pt')\n"
        "a = torch.load('m.pt', weights_only=False)\n"
        "b = torch.load('other.pt')\n"
        "with torch.serialization.safe_globals([torch.nn.Linear]):\n"
        "    c = torch.load('m.pt')\n"
        "def load(path):\n"
        "    return torch.load(path)\n"  # a parameter: which file is unknown
        "torch.save(model.state_dict(), 'sd.pt')\n"
        "d = torch.load('sd.pt')\n"
    )
    assert findings(src, "TL604") == []


def test_tl604_namespace_through_parse_args(findings):
    src = (
        "import argparse\nimport torch\n"
        "def main():\n"
        "    p = argparse.ArgumentParser()\n"
        "    args = p.parse_args()\n"
        "    torch.save({'args': args, 'step': 1}, args.ckpt)\n"
        "    state = torch.load(args.ckpt, map_location='cpu')\n"
    )
    (f,) = findings(src, "TL604")
    assert f.line == 7 and "argparse.Namespace" in f.message
    (plain,) = f.alternatives
    assert plain.applicability is Applicability.DISPLAY and plain.message == "Save `vars(args)` instead"


def test_tl604_a_save_helper_in_another_project_file(tmp_path):
    """The DeiT/DETR shape: `utils.save_on_master({... 'args': args}, path)`, resumed with `torch.load(path)`."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\ndependencies = ['torch>=2.6']\n")
    (tmp_path / "utils.py").write_text(
        "import torch\ndef is_main():\n    return True\n"
        "def save_on_master(*args, **kwargs):\n    if is_main():\n        torch.save(*args, **kwargs)\n"
        "def save_pair(path, obj):\n    torch.save(obj, path)\n"
    )
    src = (
        "import argparse\nimport torch\nimport utils\nfrom utils import save_pair\n"
        "def main():\n"
        "    args = argparse.ArgumentParser().parse_args()\n"
        "    if args.resume:\n"
        "        ckpt = torch.load(args.resume, map_location='cpu')\n"
        "    utils.save_on_master({'model': 1, 'args': args}, args.resume)\n"
        "    save_pair('opt.pt', torch.optim.SGD([torch.zeros(1)], lr=0.1))\n"
        "    opt = torch.load('opt.pt')\n"
    )
    path = tmp_path / "main.py"
    path.write_text(src)
    found = lint_text(str(path), src, [rules()["TL604"]]).findings
    assert [(f.line, "line 9" in f.message or "line 10" in f.message) for f in found] == [(8, True), (11, True)]


def test_tl604_a_literal_path_saved_by_another_project_file(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\ndependencies = ['torch>=2.6']\n")
    (tmp_path / "train.py").write_text(
        "import torch\nfrom torch import nn\n"
        "def main():\n    net = nn.Sequential(nn.Linear(2, 2))\n    torch.save(net, 'net.pth')\n"
        "    torch.save(net.state_dict(), 'weights.pth')\n"
    )
    src = (
        "import torch\nMODEL = 'net.pth'\n"
        "net = torch.load(MODEL)\nsd = torch.load('weights.pth')\nother = torch.load('elsewhere.pth')\n"
    )
    path = tmp_path / "demo.py"
    path.write_text(src)
    found = lint_text(str(path), src, [rules()["TL604"]]).findings
    assert [(f.line, "train.py:5" in f.message) for f in found] == [(3, True)]


def test_tl604_silent_when_the_project_callers_are_unknown(tmp_path, monkeypatch):
    """Over the project index's limit, who calls `torch.save` is unknown (None): the other files' saves are
    not evidence, and the rule stays silent instead of failing on the unknown answer."""
    monkeypatch.setattr(project_module, "LIMIT", 1)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\ndependencies = ['torch>=2.6']\n")
    (tmp_path / "train.py").write_text("import torch\nfrom torch import nn\ntorch.save(nn.Linear(2, 2), 'net.pth')\n")
    src = "import torch\nnet = torch.load('net.pth')\n"
    path = tmp_path / "demo.py"
    path.write_text(src)
    result = lint_text(str(path), src, [rules()["TL604"]])
    assert result.findings == []


def test_tl604_an_allow_list_is_a_call_not_a_mention(findings):
    """The file's own allow-listing is read from its calls (its summary), not from its text: a comment
    naming add_safe_globals allow-lists nothing, a call does."""
    src = 'import torch\nnet = torch.nn.Linear(2, 2)\ntorch.save(net, "net.pt")\nnet = torch.load("net.pt")\n'
    (f,) = findings(src + "# TODO: add_safe_globals([torch.nn.Linear])\n", "TL604")
    assert f.line == 4
    assert findings(src + "torch.serialization.add_safe_globals([torch.nn.Linear])\n", "TL604") == []
