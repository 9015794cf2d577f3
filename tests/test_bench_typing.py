"""bench/typing_latency.py types where a training loop back-propagates; bench/workspace.py rewrites only
the sections it measured."""

from __future__ import annotations

from bench.typing_latency import TYPED, Site, keystrokes, loop_site
from bench.workspace import write_sections

SCRIPT = """\
import torch


def warm_up(model, x):
    model(x).sum().backward()  # not in a loop


def train(model, loader, opt):
    for x, y in loader:
        opt.zero_grad()
        with torch.autocast("cpu"):
            loss = model(x).sum()
        loss.backward()
        opt.step()
"""


def test_typing_goes_after_the_backward_of_a_training_loop():
    lines = SCRIPT.split("\n")
    assert loop_site(lines) == (12, "        ")
    assert loop_site(lines[:9]) is None, "a backward outside a loop is no training loop"


def test_the_keystrokes_type_the_statement_and_take_it_back():
    def offset(text: str, line: int, column: int) -> int:
        return sum(len(x) + 1 for x in text.split("\n")[:line]) + column

    lines = SCRIPT.split("\n")
    text, states = SCRIPT, []
    for (l0, c0, l1, c1), new in keystrokes(Site(0, 12, len(lines[12]), "        ")):
        text = text[: offset(text, l0, c0)] + new + text[offset(text, l1, c1) :]
        states.append(text)
    assert len(states) == len(TYPED) + 2
    assert f"        loss.backward()\n        {TYPED}\n        opt.step()" in states[-2]
    assert states[-1] == SCRIPT


def test_a_run_keeps_the_sections_it_did_not_measure(tmp_path):
    path = tmp_path / "WORKSPACE.md"
    path.write_text("# Old title\n\n## Real files\n\n| a |\n\n## Typing in a training loop\n\nold numbers\n")
    write_sections(path, ["# Editor speed"], ["## Typing in a training loop", "", "new numbers"])
    text = path.read_text()
    assert text.startswith("# Editor speed\n\n## Real files\n\n| a |\n\n## Typing")
    assert "new numbers" in text and "old numbers" not in text
