"""TL604 checkpoint-not-weights-only-loadable: torch.load with the weights-only default of a file saved with pickled objects"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.core.callargs import get_arg, has_star, string_value, with_keyword
from torchlint.engine.rule import DISPLAY, UNSAFE, Invalid, NodeFix, Replace, Rule, fix
from torchlint.engine.semantic.call_sites import CallSite
from torchlint.engine.semantic.names import dotted
from torchlint.engine.semantic.semantics import Scope
from torchlint.engine.semantic.values import Where, current_where, where_of
from torchlint.engine.torch.saved_checkpoints import NAMESPACE, NUMPY, PICKLED_KINDS, PLAIN, SavedElsewhere
from torchlint.findings import Severity

from ..numerics._helpers import line_of

_SAFE_GLOBALS = ("torch.serialization.safe_globals",)
_DEPTH = 6


@dataclass(frozen=True)
class _Save:
    call: cst.Call
    path: str  # the path expression's key (see `_key`)
    what: str  # what the file holds that the weights-only unpickler refuses
    value: cst.BaseExpression  # the expression that holds it, in the saved object


class CheckpointNotWeightsOnlyLoadable(Rule):
    code = "TL604"
    analyses = frozenset(
        {
            Analysis.CALL_SITES,
            Analysis.IS_PROGRAM,
            Analysis.OWN_SUMMARY,
            Analysis.SAVED_CHECKPOINTS,
            Analysis.SCOPES,
            Analysis.TORCH_VERSION,
            Analysis.VALUES,
        }
    )
    requires = ("load",)
    name = "checkpoint-not-weights-only-loadable"
    message = (
        "`torch.load` uses `weights_only=True` (the default since torch 2.6) but the file `torch.save` writes "
        "{place} holds {what}: UnpicklingError on every load — save plain data instead (`state_dict()`, "
        "`vars(args)`, `.tolist()`), or pass `weights_only=False` if the file is trusted"
    )
    severity = Severity.ERROR
    category = "correctness"
    summary = "torch.load (weights-only default) of a file saved with a module, optimizer, Namespace or numpy array"
    what = (
        "Flags `torch.load(path)` without `weights_only=` when the project targets torch 2.6 or later (whose "
        "default is `weights_only=True`) and this file writes the same path (the same expression, or names "
        "bound to it) with `torch.save` of something the weights-only unpickler refuses: a whole module, an "
        "optimizer or scheduler object, an `argparse.Namespace` (`parser.parse_args()`), or a numpy array or "
        "scalar — saved directly, as a value of a saved dict literal (or a name bound to one), or through a "
        "save helper of this file or another project file that hands its parameters to `torch.save` "
        "(`utils.save_on_master({'args': args, ...}, path)`, the DeiT/DETR shape). Loads inside "
        "`torch.serialization.safe_globals` and programs that call `add_safe_globals` are not flagged. Another "
        "project file's `torch.save` (a train script saving, a demo script loading) is paired through the same "
        'literal path (`torch.save(model, "model.pth")` there, `torch.load("model.pth")` here).'
    )
    why = (
        "Since torch 2.6 `torch.load` unpickles only tensors, primitive types and allow-listed classes by "
        "default. A checkpoint holding a pickled module, optimizer, `Namespace` or numpy object raises "
        "`_pickle.UnpicklingError: Weights only load failed` on every load (checked on torch 2.13), so a "
        "resume or evaluation script that worked on torch 2.5 fails on the first line that reads the file."
    )
    example = """\
import argparse
import torch

parser = argparse.ArgumentParser()
args = parser.parse_args()
torch.save({"model": model.state_dict(), "args": args}, "ckpt.pt")
state = torch.load("ckpt.pt")
"""
    fix_example = """\
import argparse
import torch

parser = argparse.ArgumentParser()
args = parser.parse_args()
torch.save({"model": model.state_dict(), "args": args}, "ckpt.pt")
state = torch.load("ckpt.pt", weights_only=False)
"""
    fix_safety = (
        "Unsafe: `weights_only=False` makes the load run the file's pickle, which can execute code (TL601 then "
        "says so) — right only for files you wrote yourself. Display only, as an alternative: the better change "
        "at the save (`vars(args)` for a Namespace, `.state_dict()` for a module, optimizer or scheduler named "
        "in the saved object), not applied automatically: files already written keep the old objects, and code "
        "that reads the checkpoint must then rebuild the object from the state dict."
    )
    VALID = [
        # state dicts and plain data load under the default
        'import torch\ntorch.save({"model": model.state_dict(), "epoch": 3}, "ckpt.pt")\nstate = torch.load("ckpt.pt")\n',
        'import argparse, torch\nargs = argparse.ArgumentParser().parse_args()\ntorch.save({"args": vars(args)}, "c.pt")\n'
        's = torch.load("c.pt")\n',
        # trusted, said explicitly
        'import torch\nnet = torch.nn.Linear(2, 2)\ntorch.save(net, "net.pt")\nnet = torch.load("net.pt", weights_only=False)\n',
        'import torch\nnet = torch.nn.Linear(2, 2)\ntorch.save(net, "net.pt")\n'
        "torch.serialization.add_safe_globals([torch.nn.Linear])\nnet = torch.load('net.pt')\n",
        # a different file
        'import torch\nnet = torch.nn.Linear(2, 2)\ntorch.save(net, "net.pt")\nsd = torch.load("weights.pt")\n',
    ]
    INVALID = [
        Invalid(
            'import torch\nnet = torch.nn.Linear(2, 2)\npath = "net.pt"\ntorch.save(net, path)\nnet = torch.load(path)\n',
            line=5,
            fixed='import torch\nnet = torch.nn.Linear(2, 2)\npath = "net.pt"\ntorch.save(net, path)\n'
            "net = torch.load(path, weights_only=False)\n",
            alternatives=(
                'import torch\nnet = torch.nn.Linear(2, 2)\npath = "net.pt"\ntorch.save(net.state_dict(), path)\n'
                "net = torch.load(path)\n",
            ),
        ),
        Invalid(
            "import numpy as np\nimport torch\n"
            "def save_checkpoint(state, filename):\n    torch.save(state, filename)\n"
            "save_checkpoint({'best_acc': np.float64(0.9), 'epoch': 3}, args.out)\n"
            "ckpt = torch.load(args.out, map_location='cpu')\n",
            line=6,
            fixed="import numpy as np\nimport torch\n"
            "def save_checkpoint(state, filename):\n    torch.save(state, filename)\n"
            "save_checkpoint({'best_acc': np.float64(0.9), 'epoch': 3}, args.out)\n"
            "ckpt = torch.load(args.out, map_location='cpu', weights_only=False)\n",
        ),
    ]

    def visit_Module(self, node: cst.Module) -> None:
        self.saves: list[_Save] | None = None

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.qualname(node.func) != "torch.load" or has_star(node) or get_arg(node, "weights_only") is not None:
            return
        if self.ctx.torch_version.pair < (2, 6) or self.ctx.under_call(*_SAFE_GLOBALS):
            return
        path = get_arg(node, "f", 0)
        key = self._key(path.value, current_where(self.ctx)) if path is not None else None
        if key is None:
            return
        save = next((s for s in self._saves() if s.path == key), None)
        elsewhere = self._elsewhere(path.value) if save is None and path is not None else None
        if (save is None and elsewhere is None) or self._allow_lists():
            return
        edit = fix(
            "Pass `weights_only=False`",
            Replace(node, with_keyword(node, "weights_only", "False")),
            applicability=UNSAFE,
            risk="unpickles the file: run only on files you trust",
        )
        if save is not None:
            line = line_of(self.ctx.module, save.call)
            message = self.message.format(place=f"on line {line}", what=save.what)
            self.report(node, message, fix=edit, alternatives=_plain_data(save), cites=(line,))
        elif elsewhere is not None:
            self.report(node, self.message.format(place=f"at {elsewhere.place}", what=elsewhere.what), fix=edit)

    def _elsewhere(self, path: cst.BaseExpression) -> SavedElsewhere | None:
        """A save of the same literal path in another project file (a train script saving, a demo loading)."""
        literal = string_value(path)
        if isinstance(path, cst.Name):
            found = self.ctx.values.value_of(path, current_where(self.ctx))
            literal = string_value(found[0]) if found is not None else None
        if literal is None or self.ctx.project is None:
            return None
        return self.ctx.saved_checkpoints.saved_elsewhere(literal)

    def _allow_lists(self) -> bool:
        """The file, or the program it belongs to, allow-lists classes for the weights-only unpickler."""
        own = self.ctx.own_summary
        if own is not None and "add_safe_globals" in own.called:
            return True
        return self.ctx.project is not None and self.ctx.program_calls("add_safe_globals")

    def _saves(self) -> list[_Save]:
        if self.saves is None:
            self.saves = [save for site in self.ctx.call_sites.calls if (save := self._save(site)) is not None]
        return self.saves

    def _save(self, site: CallSite) -> _Save | None:
        call = site.call
        if has_star(call):
            return None
        if self.ctx.qualname(call.func) == "torch.save":
            obj, path = get_arg(call, "obj", 0), get_arg(call, "f", 1)
        else:
            obj, path = self._through_helper(call)
        if obj is None or path is None:
            return None
        where = where_of(site)
        key = self._key(path.value, where)
        if key is None:
            return None
        scope = self.ctx.semantics.scope_of_chain(site.chain)
        for value, at in self._values(obj.value, where, 0):
            what = self._refused(value, at, scope if at is where or at == where else None)
            if what is not None:
                return _Save(call, key, what, value)
        return None

    def _through_helper(self, call: cst.Call) -> tuple[cst.Arg | None, cst.Arg | None]:
        """The object and path arguments of a call to a save helper (saved_checkpoints.save_helper)."""
        slots = self.ctx.saved_checkpoints.save_helper(call.func)
        if slots is None:
            return None, None
        (obj, obj_at), (path, path_at) = slots
        return get_arg(call, obj, obj_at), get_arg(call, path, path_at)

    def _values(self, expr: cst.BaseExpression, where: Where, depth: int) -> list[tuple[cst.BaseExpression, Where]]:
        """What a saved object is made of: the values of a dict literal, through names and one helper call."""
        if depth > _DEPTH:
            return []
        if isinstance(expr, cst.Name):
            found = self.ctx.values.value_of(expr, where)
            if found is not None and isinstance(found[0], cst.Dict):
                return self._values(found[0], found[1], depth + 1)
            return [(expr, where)]
        if isinstance(expr, cst.Dict):
            return [(e.value, where) for e in expr.elements if isinstance(e, cst.DictElement)]
        return [(expr, where)]

    def _refused(self, expr: cst.BaseExpression, where: Where, scope: Scope | None) -> str | None:
        """What the weights-only unpickler refuses in `expr` (None: allowed, or not proven)."""
        if scope is not None:
            kind = self.ctx.semantics.infer(expr, scope)
            for flag, what in PICKLED_KINDS.items():
                if kind & flag and not kind & PLAIN:
                    return what
        built = self.ctx.values.builder(expr, where) if isinstance(expr, (cst.Name, cst.Attribute, cst.Call)) else None
        if built is None:
            return None
        call, at = built
        q = self.ctx.qualname(call.func) or ""
        if q.startswith("numpy."):
            return NUMPY
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "parse_args":
            parser = self.ctx.values.builder(func.value, at)
            if parser is not None and self.ctx.qualname(parser[0].func) == "argparse.ArgumentParser":
                return NAMESPACE
        return None

    def _key(self, expr: cst.BaseExpression, where: Where, depth: int = 0) -> str | None:
        """What names a path: a string literal's text, a name's value's key, or the code of an expression
        that is not a bare name (`args.out`, `os.path.join(root, "best.pt")`)."""
        if depth > _DEPTH:
            return None
        text = string_value(expr)
        if text is not None:
            return repr(text)
        if isinstance(expr, cst.Name):
            found = self.ctx.values.value_of(expr, where)
            return self._key(found[0], found[1], depth + 1) if found is not None else None
        if isinstance(expr, (cst.Attribute, cst.Call, cst.BinaryOperation, cst.FormattedString)):
            return self.ctx.module.code_for_node(expr)
        return None


def _plain_data(save: _Save) -> tuple[NodeFix, ...]:
    """The save-side change (display only: files already written keep the old object): `vars(args)` for a
    Namespace, `.state_dict()` for a module, optimizer or scheduler named in the saved object."""
    name = dotted(save.value)
    if name is None or save.what == NUMPY:
        return ()
    plain = f"vars({name})" if save.what == NAMESPACE else f"{name}.state_dict()"
    return (fix(f"Save `{plain}` instead", Replace(save.value, plain), applicability=DISPLAY),)
