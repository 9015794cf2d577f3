"""One inference (inference.py): a class gets one kind whichever file asks about it, and every lookup of
what a name holds follows Python's scopes (scopes.py), notebooks read as one module in cell order."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from torchlint import notebook
from torchlint.engine.context import FileContext
from torchlint.engine.core.walk import iter_nodes
from torchlint.engine.runner import lint_text
from torchlint.engine.semantic import inference
from torchlint.engine.semantic.kinds import Kind
from torchlint.engine.semantic.project import Dependencies, project_at, recording
from torchlint.engine.torch.dataset_storage import DATASET_BASES, python_object_store
from torchlint.engine.torch.model_mode import mode_dependent, mode_free
from torchlint.registry import rules

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


# -- functions and globals: one answer, asked from their own file or from an importer ------------------------
def _project(tmp_path: Path, files: dict[str, str]) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\nversion = '0'\n")
    for name, text in files.items():
        (tmp_path / name).write_text(text)


def _own_and_imported(tmp_path: Path, files: dict[str, str], names: tuple[str, ...]) -> tuple[dict, dict]:
    """The kinds of `names` in lib.py, read there and in main.py, which imports them from lib (`value` is a call
    of the function under test in both)."""
    _project(tmp_path, files)
    own = _kinds(tmp_path / "lib.py", files["lib.py"], names=names)
    imported = _kinds(tmp_path / "main.py", files["main.py"], names=names)
    return own, imported


NET_LIB = "from torch import nn\n\n\nclass Net(nn.Module):\n    pass\n\n\n"


@pytest.mark.parametrize(
    ("function", "call", "kind"),
    [
        # a parameter is what every call site of the function's own file passes, whoever asks
        ("def ident(m):\n    return m\n", "ident(Net())", Kind.MODEL),
        # every assignment of a local counts, not only the last one
        ("def make():\n    m = Net()\n    m = m.to('cpu')\n    return m\n", "make()", Kind.MODEL),
        # an expression nested deeper than a dozen calls is followed alike
        ("def make():\n    return Net()" + ".to('cpu')" * 14 + "\n", "make()", Kind.MODEL),
        # annotations and `with` targets are evidence for both
        ("import torch\n\ndef make(d: torch.device):\n    return d\n", "make(None)", Kind.DEVICE),
        ("def make():\n    m = Net()\n    return m.state_dict()\n", "make()", Kind.CONTAINER),
    ],
)
def test_a_function_returns_one_kind_whichever_file_asks(tmp_path, function, call, kind):
    name = function.split("def ")[-1].split("(")[0]
    lib = f"{NET_LIB}{function}\n\nvalue = {call}\n"
    main = f"from lib import Net, {name}\n\nvalue = {call}\n"
    own, imported = _own_and_imported(tmp_path, {"lib.py": lib, "main.py": main}, ("value",))
    assert own == imported == {"value": kind}


@pytest.mark.parametrize(
    ("assignments", "kind"),
    [
        ("model = Net()\nmodel = model.to('cpu')\n", Kind.MODEL),
        ("model = 1\nmodel = Net()\n", Kind.NUMBER | Kind.MODEL),  # every binding, as the file itself reads it
        ("def setup():\n    global model\n    model = Net()\n\nmodel = None\n", Kind.MODEL),
    ],
)
def test_a_global_holds_one_kind_whichever_file_asks(tmp_path, assignments, kind):
    files = {"lib.py": NET_LIB + assignments, "main.py": "from lib import model\n"}
    own, imported = _own_and_imported(tmp_path, files, ("model",))
    assert own == imported == {"model": kind}


def test_a_function_of_a_third_file_and_a_cycle_get_one_answer(tmp_path):
    files = {
        "base.py": NET_LIB + "def make_base():\n    m = Net()\n    m = m.cuda()\n    return m\n",
        # a.f and b.g call each other: the cycle proves nothing, and says so to every asker
        "a.py": "import b\n\ndef f():\n    return b.g()\n\nvalue = f()\n",
        "b.py": "import a\n\ndef g():\n    return a.f()\n",
        "lib.py": "from base import make_base\n\ndef make():\n    return make_base().train()\n\nvalue = make()\n",
        "main.py": "from lib import make\n\nvalue = make()\n",
    }
    own, imported = _own_and_imported(tmp_path, files, ("value",))
    assert own == imported == {"value": Kind.MODEL}
    assert _kinds(tmp_path / "a.py", files["a.py"], names=("value",)) == {"value": Kind.NONE}
    main = "from a import f\n\nvalue = f()\n"
    assert _kinds(tmp_path / "main.py", main, names=("value",)) == {"value": Kind.NONE}


@pytest.mark.parametrize(("length", "kind"), [(3, Kind.MODEL), (40, Kind.NONE)])
def test_a_chain_of_calls_across_files_has_one_limit(tmp_path, length, kind):
    """m0.f0 returns m1.f1(), ... the last returns a Net: followed while short, unknown past the limit (never a
    RecursionError), the same from the first file and from one importing it."""
    files = {
        f"m{i}.py": f"from m{i + 1} import f{i + 1}\n\ndef f{i}():\n    return f{i + 1}()\n" for i in range(length)
    }
    files[f"m{length}.py"] = NET_LIB + f"def f{length}():\n    return Net()\n"
    files["m0.py"] += "\nvalue = f0()\n"
    files["main.py"] = "from m0 import f0\n\nvalue = f0()\n"
    _project(tmp_path, files)
    assert _kinds(tmp_path / "m0.py", files["m0.py"], names=("value",)) == {"value": kind}
    assert _kinds(tmp_path / "main.py", files["main.py"], names=("value",)) == {"value": kind}


def test_a_method_via_self_returns_what_the_project_reads_of_it(tmp_path):
    lib = NET_LIB + (
        "class Trainer:\n    def build(self):\n        return Net()\n\n    def wrapped(self):\n"
        "        return self.build().to('cpu')\n\n    def fit(self):\n        result = self.wrapped()\n"
    )
    _project(tmp_path, {"lib.py": lib})
    here = _kinds(tmp_path / "lib.py", lib, at="fit", names=("result",))
    project = project_at(tmp_path)
    with recording(Dependencies()):
        summary = project.summary(tmp_path / "lib.py")
        assert summary is not None
        read = inference.for_file(project, summary)
        elsewhere = read.method_returns("wrapped", summary.class_defs["Trainer"])
    assert here == {"result": elsewhere} == {"result": Kind.MODEL}


def test_an_answer_does_not_depend_on_the_order_of_questions():
    """Reading a caller first (`out = helper(Net())` reads helper's returns) must not fix helper's parameter as
    unknown for the questions that come after: the same kinds in either order."""
    code = NET + "def helper(model):\n    model.eval()\n    return model\n\ndef main():\n    out = helper(Net())\n"

    def ask(order):
        ctx = FileContext("m.py", code, cst.parse_module(code))
        found = {}
        with recording(ctx.read):
            for at, name in order:
                fn, chain = ctx.semantics.functions()[at][0]
                ctx.scope = ctx.semantics.scope_of_chain((*chain, fn))
                found[name] = ctx.kind(cst.Name(name))
        return found

    assert ask([("main", "out"), ("helper", "model")]) == ask([("helper", "model"), ("main", "out")])
    assert ask([("main", "out"), ("helper", "model")]) == {"out": Kind.MODEL, "model": Kind.MODEL}


# -- the torch analyses read what the inference reads --------------------------------------------------------
BASE_DATASET = "from torch.utils.data import Dataset\n\n\nclass Base(Dataset):\n    pass\n"
SAMPLES = """\
from torch.utils.data import DataLoader
from base import Base


class Samples(Base):
    def __init__(self, path):
        self.samples = [line.split() for line in open(path)]

    def __getitem__(self, i):
        return self.samples[i]


loader = DataLoader(Samples("x.txt"), num_workers=4)
"""


def test_the_dataset_analysis_reads_the_hierarchy_the_inference_reads(tmp_path):
    """`Samples(Base)` with `Base(Dataset)` in another file: a Dataset for the inference's hierarchy, so for
    dataset_storage (which read only a class's own bases) and the rule built on it."""
    _project(tmp_path, {"base.py": BASE_DATASET, "main.py": SAMPLES})
    ctx = FileContext(str(tmp_path / "main.py"), SAMPLES, cst.parse_module(SAMPLES))
    with recording(ctx.read):
        summary = ctx.semantics.inference.summary
        classes = ctx.semantics.class_kinds(summary)
        assert classes.derives_from(summary.class_defs["Samples"], DATASET_BASES)
        store = python_object_store(classes, "Samples")
    assert store is not None and store.attribute == "samples"
    found = lint_text(str(tmp_path / "main.py"), SAMPLES, [rules()["TL505"]]).findings
    assert [(f.code, f.line) for f in found] == [("TL505", 13)]


MODEL_LIB = "from torch import nn\n\n\nclass Base(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.drop = nn.Dropout(0.5)\n"
MODEL_MAIN = "from lib import Base\n\n\nclass Net(Base):\n    pass\n\n\nmodel = Net()\n"


def test_the_mode_analysis_reads_the_classes_the_inference_reads(tmp_path):
    """`Net(Base)` in main.py, `Base` with a dropout in lib.py: a module for the inference, found mode-dependent
    through the same resolution of `Base` (model_mode no longer re-parses the call's code)."""
    _project(tmp_path, {"lib.py": MODEL_LIB, "main.py": MODEL_MAIN})
    ctx = FileContext(str(tmp_path / "main.py"), MODEL_MAIN, cst.parse_module(MODEL_MAIN))
    with recording(ctx.read):
        ctx.scope = ctx.semantics.scope_for(ctx.module, None)
        built = next(n for n in iter_nodes(ctx.module) if isinstance(n, cst.Call))
        assert ctx.kind(built) == Kind.MODEL
        assert mode_dependent(ctx, built) and not mode_free(ctx, built)
