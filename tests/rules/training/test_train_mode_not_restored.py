"""TL111 train-mode-not-restored beyond its embedded examples: look-alikes that must stay silent, bugs
that hide in classes, helpers and nested blocks, and where each finding lands."""

from __future__ import annotations

import textwrap

import pytest

CASES = [
    # (id, path, source, expected lines)
    (
        "validation-helper-never-restores",
        "a.py",
        """
        import torch
        model = torch.nn.Sequential(torch.nn.Linear(4, 2), torch.nn.Dropout(0.5))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        criterion = torch.nn.MSELoss()
        def validate(model, loader):
            model.eval()
            return [model(x) for x in loader]

        for epoch in range(3):
            for x, y in train_loader:
                optimizer.zero_grad()
                criterion(model(x), y).backward()
                optimizer.step()
            validate(model, val_loader)
    """,
        [6],
    ),
    (
        "train-at-epoch-start-inside-helper",
        "a.py",
        """
        def train_epoch(model, loader):
            model.train()
            for x, y in loader:
                optimizer.zero_grad()
                criterion(model(x), y).backward()
                optimizer.step()

        for epoch in range(3):
            train_epoch(model, train_loader)
            model.eval()
    """,
        [],
    ),
]


PROBE_HEAD = """
import torch
model = torch.nn.Sequential(torch.nn.Linear(4, 2), torch.nn.BatchNorm1d(2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
"""
CASES += [
    (
        # moco-v3 / simsiam main_lincls: train() keeps the frozen backbone in eval mode every epoch
        "linear-probe-helper-sets-eval-itself",
        "a.py",
        PROBE_HEAD
        + """
def train(loader, model):
    model.eval()
    for x, y in loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
def validate(loader, model):
    model.eval()
    return [model(x) for x in loader]
for epoch in range(3):
    train(train_loader, model)
    validate(val_loader, model)
""",
        [],
    ),
    (
        # barlowtwins evaluate.py: the mode is a choice between two arms
        "eval-chosen-against-train-on-another-arm",
        "a.py",
        PROBE_HEAD
        + """
for epoch in range(3):
    if finetune:
        model.train()
    elif freeze:
        model.eval()
    for x, y in train_loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
    model.eval()
""",
        [],
    ),
    (
        # validation at the start of the epoch, then training without train(): still the bug
        "validation-before-training-in-the-same-iteration",
        "a.py",
        PROBE_HEAD
        + """
for epoch in range(3):
    model.eval()
    print([model(x) for x in val_loader])
    for x, y in train_loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
""",
        [6],
    ),
]


@pytest.mark.parametrize("case,path,src,lines", CASES, ids=[c[0] for c in CASES])
def test_case(case, path, src, lines, findings):
    got = findings(textwrap.dedent(src).lstrip("\n"), "TL111", path)
    assert [f.line for f in got] == lines, [f"{f.line}: {f.message}" for f in got]


def test_tl111_backward_after_eval_in_the_same_iteration_gets_no_loop_start_fix(findings):
    """`model.train()` at the top of the loop would come too late for a backward later in the same pass."""
    src = (
        "import torch\nfrom torch import nn\nmodel = nn.Sequential(nn.Linear(2, 2), nn.Dropout())\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "for epoch in range(3):\n    model.train()\n    for x, y in loader:\n        opt.zero_grad()\n"
        "        model(x).sum().backward()\n        opt.step()\n    model.eval()\n"
        "    model(x).sum().backward()\n    opt.step()\n"
    )
    (f,) = findings(src, "TL111")
    assert f.line == 11 and f.fix is None


@pytest.mark.parametrize(
    "layers,reported",
    [
        ("nn.Linear(4, 2)", False),  # eval mode changes nothing in a model without dropout or batch-norm
        ("nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))", False),
        ("Net()", False),  # a class of this file, Linear layers only
        ("nn.Sequential(nn.Linear(4, 2), nn.BatchNorm1d(2))", True),
        ("Dropper()", True),
        ("timm.create_model('resnet18')", True),  # a library model: its layers are not known, so not proven free
    ],
)
def test_tl111_is_silent_when_the_model_is_proven_to_behave_the_same_in_both_modes(layers, reported, findings):
    src = (
        "import timm\nimport torch\nfrom torch import nn\n"
        "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 2)\n"
        "class Dropper(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.drop = nn.Dropout(0.1)\n"
        f"model = {layers}\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "for epoch in range(3):\n    for x, y in loader:\n        opt.zero_grad()\n"
        "        model(x).sum().backward()\n        opt.step()\n    model.eval()\n"
    )
    assert bool(findings(src, "TL111")) is reported


_VALIDATION_THROUGH_THE_TRAINING_HELPER = """
import torch
from torch import nn
model = nn.Sequential(nn.Linear(2, 2), nn.Dropout())
opt = torch.optim.SGD(model.parameters(), lr=0.1)

def forward_backward(batch):
    loss = model(batch).sum()
    if loss.requires_grad:
        loss.backward()

for step in range(100):
    forward_backward(next(data))
    opt.step()
    if not step % 10:
        {guard}
            model.eval()
            forward_backward(next(val_data))
            model.train()
"""


@pytest.mark.parametrize(
    "guard,reported",
    [
        # autograd off around the call: the helper's backward cannot run, `train()` restores the mode in time
        ("with torch.no_grad():", False),
        ("with torch.no_grad(), torch.autocast('cpu'):", False),
        # autograd on: the helper's backward runs in eval mode, before the restore
        ("if True:", True),
        ("with torch.enable_grad():", True),
        # turned back on inside the no_grad block, as calling contexts read `set_grad_enabled(True)`
        ("with torch.no_grad(), torch.set_grad_enabled(True):", True),
    ],
)
def test_tl111_a_backward_under_no_grad_trains_nothing(guard, reported, findings):
    src = _VALIDATION_THROUGH_THE_TRAINING_HELPER.format(guard=guard).lstrip("\n")
    got = findings(src, "TL111")
    assert bool(got) is reported, [f"{f.line}: {f.message}" for f in got]
    if got:  # restored after the backward of the same iteration: "never undone" would be false
        assert "still in force at the `backward()` after it in the same iteration" in got[0].message


_RUN_EPOCH = (
    "import torch\n"
    "model = torch.nn.Sequential(torch.nn.Linear(4, 2), torch.nn.Dropout(0.5))\n"
    "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    "def run_epoch(loader, model, mode='train'):\n"
    "{reassign}"
    "    for x, y in loader:\n"
    "        loss = ((model(x) - y) ** 2).mean()\n"
    "        if mode == 'train' or mode == 'train+log':\n"
    "            loss.backward()\n"
    "            optimizer.step()\n"
    "            optimizer.zero_grad()\n"
    "for epoch in range(3):\n"
    "    model.train()\n"
    "    run_epoch(train_loader, model, mode='train')\n"
    "    model.eval()\n"
    "    run_epoch(val_loader, model, mode={eval_mode})\n"
)


@pytest.mark.parametrize(
    "eval_mode,reassign,reported",
    [
        ("'eval'", "", False),  # the helper's backward is behind `if mode == 'train'`: this call never runs it
        ("'train'", "", True),
        ("chosen", "", True),  # a mode the analysis cannot read
        ("'eval'", "    mode = 'train'\n", True),  # the helper reassigns its parameter: the argument decides nothing
    ],
)
def test_tl111_a_helper_branch_the_call_constants_rule_out_runs_no_backward(eval_mode, reassign, reported, findings):
    src = _RUN_EPOCH.format(eval_mode=eval_mode, reassign=reassign)
    assert bool(findings(src, "TL111")) is reported
