"""TL604 checkpoint-not-weights-only-loadable beyond its embedded examples."""

from __future__ import annotations

from torchlint.engine import lint_text
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
