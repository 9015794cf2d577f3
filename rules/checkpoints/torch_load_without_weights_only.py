"""TL601 torch-load-without-weights-only: torch.load() without weights_only=True"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.core.callargs import get_arg, has_star, is_name, with_keyword
from torchlint.engine.rule import UNSAFE, Invalid, Replace, Rule, fix
from torchlint.engine.semantic.values import current_where
from torchlint.engine.torch.saved_checkpoints import file_name_of
from torchlint.findings import Severity


class TorchLoadWithoutWeightsOnly(Rule):
    code = "TL601"
    analyses = frozenset(
        {
            Analysis.TORCH_VERSION,
            Analysis.VERSION_GUARDS,
            Analysis.PROJECT,
            Analysis.VALUES,
            Analysis.CALL_SITES,
            Analysis.SAVED_CHECKPOINTS,
        }
    )
    requires = ("load",)
    version_sensitive = True
    name = "torch-load-without-weights-only"
    message = (
        "`torch.load` without `weights_only=True` unpickles the file on torch {version} (the default before "
        "2.6), which can run arbitrary code"
    )
    unsafe_message = (
        "`torch.load(..., weights_only=False)` unpickles the file, which can run arbitrary code: load only "
        "files you trust, or allow the classes it needs with `torch.serialization.add_safe_globals`"
    )
    severity = Severity.WARNING
    category = "security"
    opt_in = (
        "Measured on 94 public repositories it was not tuned on (bench/realworld, six sets each unseen when "
        "first run), 48 of its 78 findings were right (62%; 95% Wilson interval 50-72%), 30 debatable, none "
        "wrong: the debatable ones load checkpoints the project's own training wrote (`--resume`, a converter "
        "or plot script reading the run's output, an explicit `weights_only=False` to restore a dict holding "
        "an argparse `Namespace` or loss lists), where unpickling trusts only the user's own files. Select it "
        "(`--extend-select TL601`) for code that loads files from others: model hubs, shared drives, "
        "downloads."
    )
    summary = "torch.load() that unpickles (weights_only=False, or no weights_only before torch 2.6)"
    what = (
        "Flags `torch.load(..., weights_only=False)` always, and `torch.load(...)` without `weights_only=` when "
        "the project targets a torch older than 2.6 (where the default is full unpickling). The target comes "
        "from `torch-version` in `[tool.torchlint]`, else the project's declared dependencies, else the "
        "installed torch (`torchlint check --show-settings FILE` prints it). Loads inside "
        "`torch.serialization.safe_globals(...)` are written for the safe default and stay silent, and so are "
        "loads of a file the project writes itself: a project file's `torch.save` targets a path ending in the "
        'same file name (`torch.save(train_set, out / "train.pt")` in a prepare script, '
        '`torch.load(os.path.join(data_dir, "train.pt"))` in the training script; a literal name, a name '
        'concatenated to a folder, a file object of `open(name, "wb")`), and nothing else in those files '
        "touches the name but saves, loads, existence checks and temporary folders (a download to it is "
        "reported). Whether the weights-only default of torch 2.6 would refuse such a file is TL604's question."
    )
    why = (
        "`torch.load` uses `pickle`. A pickle can name any importable callable to run while it loads — "
        "`os.system`, `subprocess.Popen`, `exec` — so loading a checkpoint downloaded from the internet, a "
        "shared drive or a model hub hands the file's author code execution on your machine (and your "
        "credentials, data and GPUs). `weights_only=True` restricts unpickling to tensors, primitive "
        "types and allow-listed classes. PyTorch 2.6 made it the default; before 2.6, or with "
        "`weights_only=False`, every load runs the file's pickle."
    )
    example = 'import torch\n\nstate = torch.load("checkpoint.pt", weights_only=False)\n'
    fix_example = 'import torch\n\nstate = torch.load("checkpoint.pt", weights_only=True)\n'
    fix_safety = (
        "Unsafe: right for checkpoints that hold tensors, dicts, lists and numbers (a `state_dict()`), "
        "but a file that pickled whole objects then fails to load instead of running code — re-save it "
        "as a state_dict, or allow its classes with `torch.serialization.add_safe_globals`. Which kind "
        "of file the call loads is not visible in the code. For "
        "`weights_only=False` no fix is offered: the author chose full unpickling, and only they know "
        "whether the file is trusted."
    )
    VALID = [
        'import torch\nsd = torch.load("m.pt", weights_only=True)\n',
        # torch >= 2.6 (no project pins an older one): the default is already weights_only=True
        'import torch\nsd = torch.load("m.pt", map_location="cpu")\n',
        "import pickle\nobj = pickle.load(f)\n",
        "def load(path):\n    return path\nload('x')\n",
        "import torch\nsd = torch.load(path, **load_kwargs)\n",
    ]
    INVALID = [
        Invalid('import torch\nsd = torch.load("m.pt", weights_only=False)\n', line=2),
        Invalid(
            'from torch import load\nsd = load(path, map_location="cpu", weights_only=False)\n',
            line=2,
        ),
        Invalid(
            'import torch\nsd = torch.load("m.pt")\n',
            line=2,
            fixed='import torch\nsd = torch.load("m.pt", weights_only=True)\n',
            torch_version="2.4",
        ),
        Invalid(
            'from torch import load\nsd = load(path, map_location="cpu")\n',
            line=2,
            fixed='from torch import load\nsd = load(path, map_location="cpu", weights_only=True)\n',
            torch_version="2.1",
        ),
        Invalid("import pickle, torch\nobj = torch.load(f, pickle_module=pickle)\n", line=2, torch_version="2.5"),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.qualname(node.func) != "torch.load" or has_star(node):  # **kwargs may carry weights_only
            return
        weights_only = get_arg(node, "weights_only")
        if weights_only is not None:
            if is_name(weights_only.value, "False"):
                self.report(node, self.unsafe_message)
            return
        version = self.ctx.torch_version
        if version.pair >= (2, 6) or self.ctx.under_call(*_SAFE_GLOBALS) or self._own_output(node):
            return
        message = self.message.format(version=version)
        if get_arg(node, "pickle_module", 2) is not None:
            # a custom unpickler is an explicit choice: say so, but do not guess the fix
            self.report(node, message)
            return
        edit = fix(
            "Add `weights_only=True`",
            Replace(node, with_keyword(node, "weights_only", "True")),
            applicability=UNSAFE,
            risk="files of pickled objects no longer load",
        )
        self.report(node, message, fix=edit)

    def _own_output(self, load: cst.Call) -> bool:
        """The file is one the project writes itself (`torch.save(train_set, out / "train.pt")`
        in a prepare script, `torch.load(os.path.join(d, "train.pt"))` here): no file from elsewhere."""
        path = get_arg(load, "f", 0)
        if path is None or self.ctx.project is None:
            return False
        expr = path.value
        if isinstance(expr, cst.Name):
            found = self.ctx.values.value_of(expr, current_where(self.ctx))
            if found is None:
                return False
            expr = found[0]
        name = file_name_of(self.ctx.module.code_for_node(expr))
        if name is None:
            return False
        return self.ctx.saved_checkpoints.written_by_project(name)


_SAFE_GLOBALS = ("torch.serialization.safe_globals",)
