"""TL205 module-train-overridden: an nn.Module subclass redefines `train`/`eval` with another signature"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.rule import DISPLAY, Invalid, Replace, Rule, fix
from torchlint.findings import Severity

# What each mode switch is called with by torch itself: `Module.eval()` is `self.train(False)`, and
# `Module.train(mode)` calls `child.train(mode)` on every submodule.
_CALLED_WITH = {"train": (0, 1), "eval": (0,)}  # positional argument counts after `self`
_CALLS = {
    "train": "`model.train()`, `model.eval()` (which calls `self.train(False)`) and every parent module's "
    "mode switch (`child.train(mode)`) call it with no argument or with `mode`",
    "eval": "`model.eval()` calls it with no argument",
}
_RENAMES = {"train": "fit", "eval": "evaluate"}


class ModuleTrainOverridden(Rule):
    code = "TL205"
    analyses = frozenset({Analysis.KINDS, Analysis.OWN_SUMMARY})
    requires = ("train", "eval")
    name = "module-train-overridden"
    message = (
        "`{cls}.{method}` replaces `nn.Module.{method}` with a signature torch cannot call: {calls}; rename the method"
    )
    severity = Severity.ERROR
    category = "correctness"
    summary = (
        "nn.Module subclass defines `train`/`eval` with a signature other than `train(self, mode=True)`/`eval(self)`"
    )
    what = (
        "Flags a method `train` or `eval` of an `nn.Module` subclass (proven by its bases, also through "
        "project classes in other files) that cannot be called the way torch calls it: `train` must accept "
        "no argument and one positional argument (`mode`), `eval` no argument. Silent for "
        "`def train(self, mode=True)`, `def train(self, mode: bool = True)`, `def eval(self)`, signatures "
        "taking `*args`, and decorated methods."
    )
    why = (
        "`Module.train(mode)` and `Module.eval()` are how torch switches dropout and batch norm between "
        "training and evaluation. A subclass that reuses the name for its own training or evaluation loop "
        "(`def train(self, loader, epochs)`) breaks them: `model.eval()` raises `TypeError` (it calls "
        "`self.train(False)`), so does any parent module's `train()`, and code that does run calls the loop "
        "instead of switching the mode."
    )
    example = """\
from torch import nn

class Classifier(nn.Module):
    def train(self, loader, epochs):
        for _ in range(epochs):
            for x, y in loader:
                ...
"""
    fix_example = """\
from torch import nn

class Classifier(nn.Module):
    def fit(self, loader, epochs):
        for _ in range(epochs):
            for x, y in loader:
                ...
"""
    fix_safety = (
        "Display only: renaming the method (`train` → `fit`, `eval` → `evaluate`) is right, but every caller "
        "of the old name must be renamed with it, and callers may live in other files."
    )
    VALID = [
        """\
from torch import nn
class Net(nn.Module):
    def train(self, mode=True):
        super().train(mode)
        self.backbone.eval()
        return self
    def eval(self):
        return self.train(False)
""",
        """\
from torch import nn
class Net(nn.Module):
    def train(self, mode: bool = True):
        return super().train(mode)
""",
        "from torch import nn\nclass Net(nn.Module):\n    def train(self, *args, **kwargs):\n        return super().train(*args, **kwargs)\n",
        # not a module: the name is free
        "class Trainer:\n    def train(self, loader, epochs):\n        pass\n    def eval(self, loader):\n        pass\n",
    ]
    INVALID = [
        Invalid(
            "from torch import nn\nclass Net(nn.Module):\n    def train(self):\n        self.fit()\n",
            line=3,
            fixed="from torch import nn\nclass Net(nn.Module):\n    def fit(self):\n        self.fit()\n",
        ),
        Invalid(
            "import torch\nclass Net(torch.nn.Module):\n    def eval(self, loader):\n        pass\n",
            line=3,
            fixed="import torch\nclass Net(torch.nn.Module):\n    def evaluate(self, loader):\n        pass\n",
        ),
        # the new name is taken: no fix
        Invalid(
            "from torch import nn\nclass Net(nn.Module):\n    def fit(self):\n        pass\n"
            "    def train(self, data, *, epochs):\n        pass\n",
            line=5,
        ),
    ]

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        if not self.ctx.is_module_class(node) or not isinstance(node.body, cst.IndentedBlock):
            return
        methods = {s.name.value: s for s in node.body.body if isinstance(s, cst.FunctionDef)}
        for method, counts in _CALLED_WITH.items():
            fn = methods.get(method)
            if fn is None or fn.decorators or all(_accepts(fn, n) for n in counts):
                continue
            new = _RENAMES[method]
            edit = None
            if new not in methods:
                edit = fix(f"Rename `{method}` to `{new}`", Replace(fn.name, new), applicability=DISPLAY)
            message = self.message.format(cls=node.name.value, method=method, calls=_CALLS[method])
            self.report(fn.name, message, fix=edit)


def _accepts(fn: cst.FunctionDef, count: int) -> bool:
    """`fn` (a method: `self` first) can be called with `count` positional arguments and nothing else."""
    params = fn.params
    positional = [*params.posonly_params, *params.params][1:]
    if not isinstance(params.star_arg, cst.Param) and count > len(positional):
        return False
    if any(p.default is None for p in positional[count:]):
        return False
    return all(p.default is not None for p in params.kwonly_params)
