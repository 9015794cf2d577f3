"""Checkpoint rules (TL6xx): saving and loading model state safely."""

from __future__ import annotations

import libcst as cst

from torchlint.engine.callargs import get_arg, has_star, is_name, with_keyword
from torchlint.engine.kinds import Kind
from torchlint.engine.names import dotted
from torchlint.engine.rule import InsertAfter, Invalid, Replace, Rule, fix
from torchlint.engine.walk import iter_nodes
from torchlint.findings import Severity


class TorchLoadWithoutWeightsOnly(Rule):
    code = "TL601"
    requires = ("load",)
    name = "torch-load-without-weights-only"
    message = "`torch.load` without `weights_only=True` unpickles the file, which can run arbitrary code"
    severity = Severity.WARNING
    summary = "torch.load() without weights_only=True"
    what = "Flags calls to `torch.load(...)` that do not pass `weights_only=`."
    why = (
        "`torch.load` uses `pickle`. A pickle can name any importable callable to run while it loads — "
        "`os.system`, `subprocess.Popen`, `exec` — so loading a checkpoint downloaded from the internet, a "
        "shared drive or a model hub hands the file's author code execution on your machine (and your "
        "credentials, data and GPUs). `weights_only=True` restricts unpickling to tensors, primitive "
        "types and allow-listed classes. PyTorch 2.6 made it the default, but code that omits it runs "
        "unsafely on older versions and fails loudly on newer ones when it relied on full pickling; say "
        "what you mean."
    )
    example = 'import torch\n\nstate = torch.load("checkpoint.pt")\n'
    fix_example = 'import torch\n\nstate = torch.load("checkpoint.pt", weights_only=True)\n'
    fix_safety = (
        "Safe for checkpoints that hold tensors, dicts, lists and numbers (a `state_dict()`); a file "
        "that pickled whole objects then fails to load instead of running code — re-save it as a "
        "state_dict, or allow its classes with `torch.serialization.add_safe_globals`."
    )
    VALID = [
        'import torch\nsd = torch.load("m.pt", weights_only=True)\n',
        'import torch\nsd = torch.load("m.pt", map_location="cpu", weights_only=False)\n',
        "import pickle\nobj = pickle.load(f)\n",
        "def load(path):\n    return path\nload('x')\n",
        "import torch\nsd = torch.load(path, **load_kwargs)\n",
    ]
    INVALID = [
        Invalid(
            'import torch\nsd = torch.load("m.pt")\n',
            line=2,
            fixed='import torch\nsd = torch.load("m.pt", weights_only=True)\n',
        ),
        Invalid(
            'from torch import load\nsd = load(path, map_location="cpu")\n',
            line=2,
            fixed='from torch import load\nsd = load(path, map_location="cpu", weights_only=True)\n',
        ),
        Invalid("import pickle, torch\nobj = torch.load(f, pickle_module=pickle)\n", line=2),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.qualname(node.func) != "torch.load":
            return
        if get_arg(node, "weights_only") is not None or has_star(node):  # **kwargs may carry it
            return
        if get_arg(node, "pickle_module", 2) is not None:
            # a custom unpickler is an explicit choice: say so, but do not guess the fix
            self.report(node)
            return
        self.report(node, fix=fix("Add `weights_only=True`", Replace(node, with_keyword(node, "weights_only", "True"))))


class UncheckedNonStrictLoad(Rule):
    code = "TL602"
    requires = ("load_state_dict",)
    name = "unchecked-non-strict-load"
    message = (
        "`load_state_dict(..., strict=False)` result is discarded: missing and unexpected keys (a renamed "
        "layer, a `module.` prefix) pass silently and the model keeps random weights; bind and check the result"
    )
    severity = Severity.WARNING
    summary = "load_state_dict(strict=False) whose missing/unexpected keys are ignored"
    what = (
        "Flags `model.load_state_dict(sd, strict=False)` when the returned `(missing_keys, unexpected_keys)` "
        "is thrown away or bound to a name that is never read."
    )
    why = (
        "`strict=False` is meant for deliberate partial loads. With the result ignored, a checkpoint whose "
        "keys do not match at all (wrapped in `module.`, renamed layers, a different architecture) loads "
        "*nothing* and reports success; the model then trains or evaluates from random initialisation."
    )
    example = """\
import torch

model.load_state_dict(torch.load("ckpt.pt", weights_only=True), strict=False)
"""
    fix_example = """\
import torch

missing, unexpected = model.load_state_dict(torch.load("ckpt.pt", weights_only=True), strict=False)
if missing or unexpected:
    print(f"load_state_dict: missing keys {missing}, unexpected keys {unexpected}")
"""
    fix_safety = (
        "Safe for `nn.Module.load_state_dict`, which returns `(missing_keys, unexpected_keys)`; offered only "
        "when the receiver is known to be a module. A custom override that returns None would fail to unpack."
    )
    VALID = [
        """\
missing, unexpected = model.load_state_dict(sd, strict=False)
assert not unexpected, unexpected
""",
        """\
result = model.load_state_dict(sd, strict=False)
logger.info("loaded: %s", result)
""",
        "model.load_state_dict(sd)\n",
        "print(model.load_state_dict(sd, strict=False))\n",
    ]
    INVALID = [
        Invalid(
            "import torch\nmodel = torch.nn.Linear(2, 2)\nmodel.load_state_dict(sd, strict=False)\n",
            line=3,
            fixed=(
                "import torch\nmodel = torch.nn.Linear(2, 2)\n"
                "missing, unexpected = model.load_state_dict(sd, strict=False)\n"
                "if missing or unexpected:\n"
                '    print(f"load_state_dict: missing keys {missing}, unexpected keys {unexpected}")\n'
            ),
        ),
        Invalid("def f(net, sd):\n    res = net.load_state_dict(sd, strict=False)\n    return net\n", line=2),
    ]

    def _non_strict(self, expr) -> bool:
        if not isinstance(expr, cst.Call) or not isinstance(expr.func, cst.Attribute):
            return False
        if expr.func.attr.value != "load_state_dict":
            return False
        strict = get_arg(expr, "strict", 1)
        return strict is not None and is_name(strict.value, "False")

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        for small in node.body:
            if isinstance(small, cst.Expr) and self._non_strict(small.value):
                call = small.value
                edit = None
                if len(node.body) == 1 and self.ctx.kind(call.func.value) & Kind.MODEL:
                    code = self.ctx.module.code_for_node(call)
                    edit = fix(
                        "Bind and report the missing/unexpected keys",
                        Replace(small, f"missing, unexpected = {code}"),
                        InsertAfter(
                            node,
                            "if missing or unexpected:\n"
                            '    print(f"load_state_dict: missing keys {missing}, unexpected keys {unexpected}")',
                        ),
                    )
                self.report(call, fix=edit)
            elif isinstance(small, cst.Assign) and self._non_strict(small.value):
                names = {
                    n.value for t in small.targets for n in (t.target, *iter_nodes(t.target)) if isinstance(n, cst.Name)
                }
                if not names - {"_"} or not self._read_later(names - {"_"}, small):
                    self.report(small.value)

    def _read_later(self, names: set[str], assign: cst.Assign) -> bool:
        scope = self.ctx.current_function or self.ctx.module
        targets = {id(n) for t in assign.targets for n in (t.target, *iter_nodes(t.target))}
        return any(isinstance(n, cst.Name) and n.value in names and id(n) not in targets for n in iter_nodes(scope))


class WholeModelSaved(Rule):
    code = "TL603"
    requires = ("save",)
    name = "whole-model-saved"
    message = (
        "`torch.save({model}, ...)` pickles the module object — its class, by import path — so the file "
        "breaks when the code is refactored and needs `weights_only=False` (unsafe) to load; save `{model}.state_dict()`"
    )
    severity = Severity.INFO
    summary = "torch.save(model) instead of torch.save(model.state_dict())"
    what = "Flags `torch.save(m, ...)` where `m` is an `nn.Module`."
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
        "Changes what the file contains: code that loads it must now build the model and call "
        "`model.load_state_dict(torch.load(path, weights_only=True))`."
    )
    VALID = [
        'import torch\ntorch.save(model.state_dict(), "m.pt")\n',
        'import torch\ntorch.save({"model": model.state_dict(), "epoch": 3}, "m.pt")\n',
        'import torch\ntorch.jit.save(torch.jit.script(model), "m.pt")\n',
    ]
    INVALID = [
        Invalid(
            "import torch\nnet = torch.nn.Sequential()\ntorch.save(net, path)\n",
            line=3,
            fixed="import torch\nnet = torch.nn.Sequential()\ntorch.save(net.state_dict(), path)\n",
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.qualname(node.func) != "torch.save" or not node.args:
            return
        obj = get_arg(node, "obj", 0)
        if obj is None or not dotted(obj.value) or not self.ctx.kind(obj.value) & Kind.MODEL:
            return
        name = dotted(obj.value)
        self.report(
            obj.value,
            self.message.format(model=name),
            fix=fix("Save the state_dict", Replace(obj.value, f"{name}.state_dict()")),
        )
