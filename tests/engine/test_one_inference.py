"""One inference (inference.py): a class gets one kind whichever file asks about it, and every lookup of
what a name holds follows Python's scopes (scopes.py), notebooks read as one module in cell order."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from torchlint import notebook
from torchlint.engine.context import FileContext
from torchlint.engine.semantic.kinds import Kind
from torchlint.engine.semantic.project import recording

LIB = """\
import torch
from torch.optim import Optimizer
from torch.utils.data import DataLoader
from base import Base


class Warmup(torch.optim.lr_scheduler.LRScheduler):
    pass


class Lamb(Optimizer):
    pass


class Lamb2(Lamb):
    pass


class Loader(DataLoader):
    pass


class Net(Base):
    pass


warmup = Warmup(None)
lamb = Lamb([])
lamb2 = Lamb2([])
loader = Loader([])
net = Net()
"""
MAIN = """\
from lib import Lamb, Lamb2, Loader, Net, Warmup

warmup = Warmup(None)
lamb = Lamb([])
lamb2 = Lamb2([])
loader = Loader([])
net = Net()
"""
BASE = "from torch import nn\n\n\nclass Base(nn.Module):\n    pass\n"
NAMES = ("warmup", "lamb", "lamb2", "loader", "net")


def _kinds(path: Path, text: str, at: str | None = None, names: tuple[str, ...] = NAMES) -> dict[str, Kind]:
    """The kind of each name read at module level, or in function `at`."""
    ctx = FileContext(str(path), text, cst.parse_module(text))
    with recording(ctx.read):
        ctx.scope = ctx.semantics.scope_for(ctx.module, None)
        if at is not None:
            fn, chain = ctx.semantics.functions()[at][0]
            ctx.scope = ctx.semantics.scope_of_chain((*chain, fn))
        return {name: ctx.kind(cst.Name(name)) for name in names}


def test_a_class_has_one_kind_whichever_file_asks(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\nversion = '0'\n")
    for name, text in {"lib.py": LIB, "main.py": MAIN, "base.py": BASE}.items():
        (tmp_path / name).write_text(text)
    in_its_file = _kinds(tmp_path / "lib.py", LIB)
    elsewhere = _kinds(tmp_path / "main.py", MAIN)
    assert in_its_file == elsewhere
    assert elsewhere == {
        "warmup": Kind.SCHEDULER,
        "lamb": Kind.OPTIMIZER,
        "lamb2": Kind.OPTIMIZER,  # a subclass of a project optimizer is an optimizer
        "loader": Kind.DATALOADER,
        "net": Kind.MODEL,
    }


NET = "import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    pass\n\n\n"


@pytest.mark.parametrize(
    ("code", "at", "kind"),
    [
        # `global` / `nonlocal` assignments bind the declaring scope's owner, seen from everywhere
        ("def setup():\n    global model\n    model = Net()\n\ndef train():\n    return model\n", "train", Kind.MODEL),
        ("def setup():\n    global model\n    model = Net()\n", "setup", Kind.MODEL),
        (
            "def outer():\n    model = None\n    def build():\n        nonlocal model\n        model = Net()\n"
            "    def use():\n        return model\n",
            "use",
            Kind.MODEL,
        ),
        # a local of any binding form hides the module's name, whatever it holds
        ("model = Net()\n\ndef f(models):\n    for model in models:\n        pass\n", "f", Kind.NONE),
        ("model = Net()\n\ndef f():\n    del model\n", "f", Kind.NONE),
        ("model = Net()\n\ndef f():\n    try:\n        pass\n    except E as model:\n        pass\n", "f", Kind.NONE),
        ("model = Net()\n\ndef f():\n    model += 1\n", "f", Kind.NONE),
        # a class body's names are invisible to its methods; the module's are not
        (
            "model = torch.optim.SGD([], lr=0.1)\n\nclass C:\n    model = Net()\n    def m(self):\n"
            "        return model\n",
            "m",
            Kind.OPTIMIZER,
        ),
        # a comprehension's target is its own, not the function's
        ("def f(xs):\n    model = Net()\n    ys = [model for model in xs]\n", "f", Kind.MODEL),
    ],
)
def test_lookups_follow_pythons_scopes(code, at, kind):
    assert _kinds(Path("m.py"), NET + code, at, ("model",)) == {"model": kind}


def test_notebook_cells_are_one_module_in_order():
    cells = [
        notebook.Cell(0, NET),
        notebook.Cell(1, "note", "markdown"),
        notebook.Cell(2, "def step():\n    return model\n"),
        notebook.Cell(3, "model = Net()\n"),  # bound after the cell defining `step`, before any call of it
        notebook.Cell(4, "def again():\n    return model\n\nmodel = torch.optim.SGD([], lr=0.1)\n"),
    ]
    text = notebook.build(cells).text
    # one module: the later cells' bindings are the module's, so both kinds reach every function
    assert _kinds(Path("nb.ipynb"), text, "step", ("model",)) == {"model": Kind.MODEL | Kind.OPTIMIZER}
    assert _kinds(Path("nb.ipynb"), text, "again", ("model",)) == {"model": Kind.MODEL | Kind.OPTIMIZER}
