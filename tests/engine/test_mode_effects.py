"""mode_effects.py: what a function does to the modes of the modules it is handed, read from its tree (never
from its text: a comment or a string mentioning `.eval()` switches nothing), per receiver and through helpers."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from torchlint.engine.semantic.project import Dependencies, project_at, recording, summarize
from torchlint.engine.torch.mode_effects import Mode, effects, mode


def _summary(text: str, path: Path = Path("m.py")):
    summary = summarize(path, path.stem, "", text)
    assert summary is not None
    return summary


def _mode(text: str, fn: str, params: frozenset[str] | None) -> Mode:
    summary = _summary(text)
    return mode(None, summary, summary.functions[fn], params)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("    net.eval()\n", Mode(off=True)),
        ("    net.module.train(False)\n", Mode(off=True)),
        ("    net.train(flag)\n", Mode(off=True)),  # a mode it cannot read
        ("    net.apply(init)\n", Mode(off=True)),
        ("    net.train()\n    loss(net).backward()\n", Mode(on=True, backward=True)),
        ("    net.train(True)\n", Mode(on=True)),
        ("    for m in net.modules():\n        m.eval()\n", Mode(off=True)),  # a local may alias it
        ("    # net.eval() is the caller's job\n    print('call .eval() first')\n", Mode()),
        ("    other.eval()\n", Mode()),  # another parameter's module
        ("    other = net\n    other.eval()\n", Mode(off=True)),  # ... unless it is reassigned
    ],
)
def test_switches_are_read_per_receiver_from_the_tree(body, expected):
    assert _mode(f"def f(net, other, flag):\n{body}", "f", frozenset({"net"})) == expected


def test_any_parameter_when_the_call_cannot_be_matched():
    assert _mode("def f(net, other):\n    other.eval()\n", "f", None) == Mode(off=True)


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("switch(net)", Mode(off=True)),
        ("switch(m=net)", Mode(off=True)),
        ("switch(other)", Mode()),  # the helper switches what it is given: not `net`
        ("relay(net)", Mode(off=True)),  # two calls deep
        ("relay(other)", Mode()),
        ("train_step(net)", Mode(on=True, backward=True)),
        ("recurse(net)", Mode()),  # a recursion adds nothing and ends
    ],
)
def test_a_helper_that_switches_what_it_is_handed(call, expected):
    text = (
        "def switch(m):\n    m.eval()\n\n"
        "def relay(x):\n    switch(x)\n\n"
        "def train_step(m):\n    m.train()\n    m(1).backward()\n\n"
        "def recurse(m):\n    recurse(m)\n\n"
        f"def f(net, other):\n    {call}\n"
    )
    assert _mode(text, "f", frozenset({"net"})) == expected


def test_a_helper_of_another_project_file(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\nversion = '0'\n")
    (tmp_path / "helpers.py").write_text("def freeze(m):\n    for p in m.parameters():\n        pass\n    m.eval()\n")
    text = "from helpers import freeze\n\ndef f(net):\n    freeze(net)\n"
    (tmp_path / "main.py").write_text(text)
    project = project_at(tmp_path)
    summary = _summary(text, tmp_path / "main.py")
    with recording(Dependencies()):
        assert mode(project, summary, summary.functions["f"], frozenset({"net"})) == Mode(off=True)


def test_read_once_per_function_and_content():
    summary = _summary("def f(net):\n    net.eval()\n")
    fn = summary.functions["f"]
    assert isinstance(fn, ast.FunctionDef)
    assert effects(summary, fn) is effects(summary, fn)
    assert [(s.method, s.root, s.to_train) for s in effects(summary, fn).switches] == [("eval", "net", False)]
