"""TL603 whole-model-saved: torch.save(model) instead of torch.save(model.state_dict())"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.core.callargs import get_arg
from torchlint.engine.rule import DISPLAY, Invalid, Replace, Rule, fix
from torchlint.engine.semantic.kinds import Kind
from torchlint.engine.semantic.names import dotted
from torchlint.findings import Severity


class WholeModelSaved(Rule):
    code = "TL603"
    analyses = frozenset({Analysis.CALL_SITES, Analysis.KINDS, Analysis.OWN_SUMMARY, Analysis.SCOPES})
    requires = ("save",)
    name = "whole-model-saved"
    message = (
        "`torch.save` of `{model}` pickles the module object — its class, by import path — so the file "
        "breaks when the code is refactored and needs `weights_only=False` (unsafe) to load; save `{model}.state_dict()`"
    )
    severity = Severity.INFO
    category = "correctness"
    opt_in = (
        "Measured on 123 public repositories it was not tuned on (bench/realworld, seven sets unseen at "
        "2026-12-03 and 2026-12-04), 4 of its 9 findings were right (5 debatable): teaching code that "
        "saves a whole model and never loads it again, or shows it beside the recommended `state_dict` "
        "way. Select it for checkpoints that other code or other torch versions will load."
    )
    summary = "torch.save(model) instead of torch.save(model.state_dict())"
    what = (
        "Flags `torch.save(m, ...)` where `m` is an `nn.Module`, and a module stored as a value of a dict literal "
        'saved that way (`torch.save({"model": model, "optimizer": opt}, path)`). Only values proven to be '
        'modules count; a key called `"model"` proves nothing.'
    )
    why = (
        "Pickling a module stores a reference to its class and the module path it lives in; renaming or "
        "moving that class, or changing its attributes, makes old checkpoints unloadable. Loading it also "
        "requires `weights_only=False`, i.e. trusting the file with code execution."
    )
    example = """\
import torch

model = torch.nn.Linear(4, 2)
torch.save(model, "model.pt")
"""
    fix_example = """\
import torch

model = torch.nn.Linear(4, 2)
torch.save(model.state_dict(), "model.pt")
"""
    fix_safety = (
        "Display only (shown, never applied by `--fix`, even with `--unsafe-fixes`): it changes what the file "
        "contains, and the project's own loader of that file (often in another file or repository) expects a "
        "whole model; it must then build the model and call "
        "`model.load_state_dict(torch.load(path, weights_only=True))`, which torchlint does not do for you."
    )
    VALID = [
        'import torch\ntorch.save(model.state_dict(), "m.pt")\n',
        'import torch\ntorch.save({"model": model.state_dict(), "epoch": 3}, "m.pt")\n',
        'import torch\ntorch.jit.save(torch.jit.script(model), "m.pt")\n',
        # the key says "model", but nothing proves the value is a module
        'import torch\ntorch.save({"model": weights, "optimizer": opt.state_dict()}, "m.pt")\n',
    ]
    INVALID = [
        Invalid(
            "import torch\nnet = torch.nn.Sequential()\ntorch.save(net, path)\n",
            line=3,
            fixed="import torch\nnet = torch.nn.Sequential()\ntorch.save(net.state_dict(), path)\n",
        ),
        Invalid(
            "import torch\nnet = torch.nn.Linear(2, 2)\nopt = torch.optim.SGD(net.parameters(), lr=0.1)\n"
            'torch.save({"model": net, "optimizer": opt.state_dict()}, path)\n',
            line=4,
            fixed="import torch\nnet = torch.nn.Linear(2, 2)\nopt = torch.optim.SGD(net.parameters(), lr=0.1)\n"
            'torch.save({"model": net.state_dict(), "optimizer": opt.state_dict()}, path)\n',
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.qualname(node.func) != "torch.save" or not node.args:
            return
        obj = get_arg(node, "obj", 0)
        if obj is None:
            return
        saved = obj.value
        # `torch.save({"model": model, "optimizer": opt.state_dict()}, path)`: each value of a dict literal
        values = (
            [e.value for e in saved.elements if isinstance(e, cst.DictElement)]
            if isinstance(saved, cst.Dict)
            else [saved]
        )
        for value in values:
            name = dotted(value)
            if name and self.ctx.kind(value) & Kind.MODEL:
                self.report(
                    value,
                    self.message.format(model=name),
                    fix=fix("Save the state_dict", Replace(value, f"{name}.state_dict()"), applicability=DISPLAY),
                )
