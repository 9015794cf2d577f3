"""Who reads a checkpoint back: the project's loaders of the state dict a statement saves.

Whether a checkpoint's format is a problem depends on its consumer. A `module.`-prefixed state dict of a DDP
wrapper is right for a loader that loads into the same wrapper or strips the prefix, and wrong for one that
loads into the bare model. This analysis answers, for a `.state_dict()` call:

- `saved(call)`: does it reach `torch.save` (directly, inside a dict or list literal, through a local name, or
  through a project function that calls `torch.save`)? A state dict handed to anything else is not a
  checkpoint;
- `loaders(call)`: the project's `load_state_dict` calls that read what it saves — those whose function (or
  module-level statement) names one of the string literals of the save (its dict key, its file name) — each
  judged `COMPATIBLE` with `module.` keys (the receiver is a wrapper, or the function strips the prefix:
  a `"module."` literal, `consume_prefix_in_state_dict_if_present`), `INCOMPATIBLE` (the receiver is proven a
  bare model and nothing strips), or `UNKNOWN`.

Loaders in other files come through the project index (files that call `load_state_dict`). Rules report a
format mismatch only when every loader found is incompatible; none found, or one unknown, is silence.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import libcst as cst

from torchlint.engine.core.callargs import string_value
from torchlint.engine.core.walk import iter_nodes
from torchlint.engine.semantic.kinds import Kind

if TYPE_CHECKING:
    from torchlint.engine.context import FileContext
    from torchlint.engine.semantic.call_sites import CallSite

_SAVE = "torch.save"
_STRIP_PREFIX = "torch.nn.modules.utils.consume_prefix_in_state_dict_if_present"
# containers a state dict may sit in on its way to `torch.save({...})`
_CARRIERS = (cst.Element, cst.DictElement, cst.Dict, cst.List, cst.Tuple, cst.Arg)


class Verdict(enum.Enum):
    COMPATIBLE = "compatible"
    INCOMPATIBLE = "incompatible"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Loader:
    call: cst.Call
    path: str
    verdict: Verdict


class CheckpointConsumers:
    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self._saving: dict[cst.FunctionDef, bool] = {}

    # -- the save --------------------------------------------------------------------------------------
    def saved(self, call: cst.Call, fn: cst.FunctionDef | None) -> cst.Call | None:
        """The save call `call`'s value reaches (in `fn`, None: module level), or None."""
        contexts = self.ctx.calling_contexts
        ancestors = contexts.ancestors(call, fn)
        if ancestors is None:
            return None
        child: cst.CSTNode = call
        for parent, child in ancestors:
            if isinstance(parent, _CARRIERS):
                continue
            if isinstance(parent, cst.Call) and child is not parent.func:
                return parent if self._saves(parent) else None
            if isinstance(parent, (cst.Assign, cst.AnnAssign)) and child is parent.value:
                targets = [t.target for t in parent.targets] if isinstance(parent, cst.Assign) else [parent.target]
                return self._saved_name(targets, fn)
            return None
        return None

    def _saved_name(self, targets: Sequence[cst.BaseExpression], fn: cst.FunctionDef | None) -> cst.Call | None:
        """`ckpt = {...}` or `ckpt["model"] = ...`, then `torch.save(ckpt, ...)` in the same body."""
        names = set()
        for t in targets:
            base = t.value if isinstance(t, cst.Subscript) else t
            if isinstance(base, cst.Name):
                names.add(base.value)
        if not names:
            return None
        root: cst.CSTNode = fn if fn is not None else self.ctx.module
        for n in iter_nodes(root, into_functions=False):
            if isinstance(n, cst.Call) and any(
                isinstance(a.value, cst.Name) and a.value.value in names for a in n.args
            ):
                if self._saves(n):
                    return n
        return None

    def _saves(self, call: cst.Call) -> bool:
        """`torch.save(...)`, or a project function whose body calls it (`save_on_master(state, path)`)."""
        if self.ctx.qualname(call.func) == _SAVE:
            return True
        target = self.ctx.calling_contexts.resolve(call.func)
        if target is None:
            return False
        other, fn = target
        return other.checkpoint_consumers._function_saves(fn)

    def _function_saves(self, fn: cst.FunctionDef) -> bool:
        known = self._saving.get(fn)
        if known is None:
            self._saving[fn] = False  # recursion proves nothing
            known = self._saving[fn] = any(
                isinstance(n, cst.Call) and self.ctx.qualname(n.func) == _SAVE for n in iter_nodes(fn.body)
            )
        return known

    # -- the loaders -----------------------------------------------------------------------------------
    def loaders(self, save: cst.Call) -> list[Loader] | None:
        """The project's loaders of what `save` writes (None: the project's loaders are unknown)."""
        keys = {v for n in iter_nodes(save) if isinstance(n, cst.SimpleString) and (v := string_value(n))}
        if not keys:
            return []
        found: list[Loader] = []
        for other in self._files():
            if other is None:
                return None
            found += other.checkpoint_consumers._loaders_here(keys)
        return found

    def _files(self) -> list[FileContext | None]:
        """This file and the project files that call `load_state_dict` (None for one that cannot be read)."""
        out: list[FileContext | None] = [self.ctx]
        project = self.ctx.project
        if project is None:
            return out
        callers = project.calling("load_state_dict")
        if callers is None:
            return [None]
        here = Path(self.ctx.path).resolve()
        contexts = self.ctx.calling_contexts
        out += [contexts.file_context(s.path, s.text) for s in callers if s.path != here]
        return out

    def _loaders_here(self, keys: set[str]) -> list[Loader]:
        out = []
        for site in self.ctx.call_sites.calls:
            func = site.call.func
            if not isinstance(func, cst.Attribute) or func.attr.value != "load_state_dict":
                continue
            if _copies_a_live_module(site.call):
                continue  # `teacher.load_state_dict(student.module.state_dict())` reads no checkpoint
            root = _root(site, self.ctx.module)
            texts = {string_value(n) for n in iter_nodes(root) if isinstance(n, cst.SimpleString)}
            if keys & texts:
                out.append(Loader(site.call, self.ctx.path, self._verdict(site, func.value, root, texts)))
        return out

    def _verdict(
        self, site: CallSite, receiver: cst.BaseExpression, root: cst.CSTNode, texts: set[str | None]
    ) -> Verdict:
        if any(t == "module" or t.startswith("module.") for t in texts if t):
            return Verdict.COMPATIBLE  # the prefix is stripped (or added) by hand
        if any(isinstance(n, cst.Call) and self.ctx.qualname(n.func) == _STRIP_PREFIX for n in iter_nodes(root)):
            return Verdict.COMPATIBLE
        kind = self.ctx.semantics.infer(receiver, self.ctx.semantics.scope_of_chain(site.chain))
        if kind & Kind.WRAPPED:
            return Verdict.COMPATIBLE
        if kind & Kind.MODEL:
            return Verdict.INCOMPATIBLE
        return Verdict.UNKNOWN


def _copies_a_live_module(load: cst.Call) -> bool:
    """A load whose state dict is another object's `state_dict()` right there: weights copied in memory."""
    arg = load.args[0].value if load.args else None
    return isinstance(arg, cst.Call) and isinstance(arg.func, cst.Attribute) and arg.func.attr.value == "state_dict"


def _root(site: CallSite, module: cst.Module) -> cst.CSTNode:
    """The function a call sits in, or the module-level statement holding it."""
    if site.function is not None:
        return site.function
    for stmt in module.body:
        if any(n is site.call for n in iter_nodes(stmt)):
            return stmt
    return module
