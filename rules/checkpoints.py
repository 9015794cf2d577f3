"""Checkpoint rules (TL6xx): saving and loading model state safely."""

from __future__ import annotations

import libcst as cst

from torchlint.engine.rule import Invalid, Replace, Rule, fix
from torchlint.model import Severity


class TorchLoadWithoutWeightsOnly(Rule):
    code = "TL601"
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
    ]

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.qualname(node.func) != "torch.load":
            return
        if any(a.keyword is not None and a.keyword.value == "weights_only" for a in node.args):
            return
        if any(a.star for a in node.args):  # **kwargs may carry it
            return
        new_args = list(node.args)
        if new_args:
            last = new_args[-1]
            if last.comma == cst.MaybeSentinel.DEFAULT or isinstance(last.comma, cst.MaybeSentinel):
                new_args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        new_args.append(cst.Arg(keyword=cst.Name("weights_only"), value=cst.Name("True"),
                                equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))))
        self.report(node, fix=fix("Add `weights_only=True`", Replace(node, node.with_changes(args=new_args))))
