"""TL605 state-dict-snapshot-aliased beyond its embedded examples."""

from __future__ import annotations

HEAD = (
    "import torch\nfrom copy import deepcopy\n"
    "model = torch.nn.Linear(2, 2)\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
)


def test_tl605_early_stopping_inside_a_function(findings, fixed):
    src = HEAD + (
        "def fit(loader):\n"
        "    best_loss, best = float('inf'), None\n"
        "    for epoch in range(10):\n"
        "        for x in loader:\n"
        "            optimizer.step()\n"
        "        loss = validate()\n"
        "        if loss < best_loss:\n"
        "            best = model.state_dict()\n"
        "    model.load_state_dict(best)\n"
        "    return model\n"
    )
    (f,) = findings(src, "TL605")
    assert f.line == 12 and "line 9" in f.message and "line 13" in f.message
    assert "best = deepcopy(model.state_dict())" in fixed(src, "TL605")


def test_tl605_a_new_value_before_the_read_is_silent(findings):
    src = HEAD + (
        "for epoch in range(10):\n"
        "    optimizer.step()\n"
        "    best = model.state_dict()\n"
        "best = torch.load('best.pt')\n"
        "model.load_state_dict(best)\n"
    )
    assert findings(src, "TL605") == []


def test_tl605_read_inside_the_same_loop_or_never_read_is_silent(findings):
    src = HEAD + (
        "for epoch in range(10):\n"
        "    optimizer.step()\n"
        "    snap = model.state_dict()\n"
        "    torch.save({'model': snap, 'epoch': epoch}, 'last.pt')\n"
        "final = model.state_dict()\n"
        "torch.save(final, 'final.pt')\n"
    )
    assert findings(src, "TL605") == []


def test_tl605_unknown_receiver_is_silent(findings):
    src = (
        HEAD + "for e in range(3):\n    optimizer.step()\n    best = thing.state_dict()\nmodel.load_state_dict(best)\n"
    )
    assert findings(src, "TL605") == []


def test_tl605_a_loop_in_another_arm_than_the_snapshot_is_not_after_it(findings):
    src = HEAD + (
        "if evaluate_only:\n"
        "    init = model.state_dict()\n"
        "else:\n"
        "    for e in range(3):\n"
        "        optimizer.step()\n"
        "model.load_state_dict(init)\n"
    )
    assert findings(src, "TL605") == []
    # on the path where the loop follows the snapshot, it is reported
    src = (
        HEAD
        + "init = model.state_dict()\nif not resume:\n    for e in range(3):\n        optimizer.step()\nmodel.load_state_dict(init)\n"
    )
    assert [f.line for f in findings(src, "TL605")] == [5]


def test_tl605_an_initial_snapshot_the_loop_replaces_is_reported_once_in_the_loop(findings):
    src = HEAD + (
        "best = model.state_dict()\n"
        "for epoch in range(10):\n"
        "    optimizer.step()\n"
        "    if improved():\n"
        "        best = model.state_dict()\n"
        "model.load_state_dict(best)\n"
    )
    assert [f.line for f in findings(src, "TL605")] == [9]
