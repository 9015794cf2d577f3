"""TL205 module-train-overridden beyond its embedded examples."""

from __future__ import annotations

from torchlint.engine import lint_text
from torchlint.registry import rules


def test_tl205_base_class_in_another_project_file(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "base.py").write_text("from torch import nn\nclass Base(nn.Module):\n    pass\n")
    src = "from base import Base\nclass Net(Base):\n    def train(self, loader):\n        pass\n"
    path = tmp_path / "net.py"
    path.write_text(src)
    found = lint_text(str(path), src, [rules()["TL205"]]).findings
    assert [(f.line, f.code) for f in found] == [(3, "TL205")]


def test_tl205_unknown_base_is_silent(findings):
    src = "from somewhere import Base\nclass Net(Base):\n    def train(self, loader):\n        pass\n"
    assert findings(src, "TL205") == []


def test_tl205_subclass_of_a_module_class_in_the_same_file(findings):
    src = (
        "from torch import nn\nclass A(nn.Module):\n    pass\n"
        "class B(A):\n    def eval(self, split='val'):\n        pass\n    def train(self, mode=True, *, hard):\n        pass\n"
    )
    assert [f.line for f in findings(src, "TL205")] == [7]


def test_tl205_train_without_mode_says_who_calls_it(findings):
    src = "from torch import nn\nclass Net(nn.Module):\n    def train(self):\n        pass\n"
    [f] = findings(src, "TL205")
    assert "self.train(False)" in f.message and f.fix is not None and f.fix.applicability.value == "display"


def test_tl205_decorated_method_is_silent(findings):
    src = "from torch import nn\nclass Net(nn.Module):\n    @staticmethod\n    def train(loader):\n        pass\n"
    assert findings(src, "TL205") == []
