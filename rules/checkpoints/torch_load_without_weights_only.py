"""TL601 torch-load-without-weights-only: torch.load() without weights_only=True"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.callargs import get_arg, has_star, with_keyword
from torchlint.engine.rule import UNSAFE, Invalid, Replace, Rule, fix
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
        "Unsafe: right for checkpoints that hold tensors, dicts, lists and numbers (a `state_dict()`), "
        "but a file that pickled whole objects then fails to load instead of running code — re-save it "
        "as a state_dict, or allow its classes with `torch.serialization.add_safe_globals`. Which kind "
        "of file the call loads is not visible in the code."
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
        self.report(
            node,
            fix=fix(
                "Add `weights_only=True`",
                Replace(node, with_keyword(node, "weights_only", "True")),
                applicability=UNSAFE,
            ),
        )
