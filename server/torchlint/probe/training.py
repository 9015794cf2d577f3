"""Checks made observable by optimizer-step and module hooks (TL1xx, TL2xx, partial moves).

At each `optimizer.step()`: were gradients cleared since the previous step (a grad
tensor replaced, set to None, or modified in place before the first new backward
contribution), are they all zero now, is a module in eval mode while its parameters
are stepped, and do autograd graphs outlive their step. Module hooks check each
called module's tensors for a device split and record where parameters were made.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

import torch
from torch import nn
from torch.nn.modules import module as module_hooks
from torch.optim import optimizer as optim_hooks
from torch.utils.hooks import RemovableHandle

from torchlint.probe.modes import State, graph_leaves
from torchlint.probe.sites import Site

_GRAPH_CAP = 5000


class Stop(BaseException):
    """Raised into the user's program to end it; a BaseException so `except Exception` cannot swallow it."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _Param:
    """What happened to one parameter's gradient since its optimizer's last step."""

    __slots__ = ("stepped", "stepped_with_grad", "seen", "fresh", "cleared", "got_grad")

    def __init__(self) -> None:
        self.stepped = False  # its optimizer has stepped at least once since we watch it
        self.stepped_with_grad = False  # it had a gradient at that step: one that could be carried over
        # (id, _version) of .grad when last looked at; a change means it was cleared
        self.seen: tuple[int, int] | None = None
        self.fresh = False  # a gradient arrived since the last step
        self.cleared = False  # .grad was set to None, replaced or modified in place since the last step
        self.got_grad = False  # ever

    def look_before_step(self, grad: torch.Tensor) -> None:
        """Between backward and step, in-place changes are usually clipping or unscaling: only a
        replaced or all-zero gradient counts as cleared."""
        state = (id(grad), grad._version)
        if state != self.seen:
            if self.seen is None or state[0] != self.seen[0] or not bool(grad.any()):
                self.cleared = True
            self.seen = state

    def look(self, grad: torch.Tensor | None) -> None:
        state = (id(grad), grad._version) if grad is not None else None
        if state != self.seen:
            self.cleared = True
        self.seen = state


class Pause(Protocol):
    """instrument.Probe._pause: whether an optimizer's step (or, with none, a zero_grad) now runs without the
    probe's modes."""

    def __call__(
        self,
        optimizer: torch.optim.Optimizer | None = None,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> bool: ...


@dataclass
class _Record:
    """What one optimizer (or the loop without one, "manual") did, step by step (1-based)."""

    name: str
    steps: int = 0
    accumulated: dict[int, set[int]] = field(default_factory=dict)  # step -> ids of params that carried a grad
    zero: list[tuple[int, Site | None]] = field(default_factory=list)  # all-zero steps, the last zero_grad's site
    sites: dict[int, Site | None] = field(default_factory=dict)  # step -> where it was taken
    eval: list[tuple[int, nn.Module, Site | None]] = field(default_factory=list)  # modules in eval mode at a step


class TrainingChecks:
    def __init__(self, state: State, script: str, max_steps: int | None):
        self.s = state
        self.script = script
        self.max_steps = max_steps
        self.steps = 0
        self.params: dict[int, _Param] = {}
        self.leaves: dict[int, weakref.ref[torch.Tensor]] = {}  # id(param) -> the parameter, for those in `params`
        self.versions: dict[int, int] = {}  # id(leaf) -> its version at the last step, in loops without optimizer
        self.optimizers: dict[int | str, _Record] = {}  # id(optimizer), or "manual" for a loop without one
        # id(param) -> (the parameter, where it was made, owner class, name)
        self.made: dict[int, tuple[weakref.ref[nn.Parameter], Site, str, str]] = {}
        self.attr_sites: dict[tuple[int, str], Site] = {}  # (id(module), attr) -> where a tensor was assigned
        self.move_sites: dict[int, Site] = {}  # id(module) -> its last .to/.cuda/.cpu
        self.eval_sites: dict[int, Site] = {}  # id(module) -> where it was put in eval mode
        # modules called in eval mode since the last step, and where
        self.eval_roots: dict[int, tuple[weakref.ref[nn.Module], Site | None]] = {}
        self.zero_grad_site: Site | None = None
        self.on_move: Callable[[nn.Module, Site | None], None] | None = None  # the DDP checks want to know
        self.optimizer_made = False  # else each backward() counts as a step
        self.split_checked: dict[int, int] = {}
        self.graph_live: dict[int, tuple[weakref.ref[torch.Tensor], Site]] = {}  # id(tensor) -> (it, where made)
        self.graph_sizes: dict[Site, list[tuple[int, int]]] = {}  # where made -> [(step, max graph size)]
        self.depth = 0
        self.on_step: Callable[[], None] | None = None  # called after each step (the child saves a checkpoint)
        # Library optimizer steps and zero_grad run without the probe's modes (instrument.Probe._pause):
        # pause(optimizer or None, args, kwargs) -> bool says whether it paused; resume(optimizer or None).
        self.pause: Pause | None = None
        self.resume: Callable[[torch.optim.Optimizer | None], None] | None = None
        self.handles: list[RemovableHandle] = []
        self.module_handles: list[RemovableHandle] = []
        self.undo: list[Callable[[], None]] = []

    # -- installation ---------------------------------------------------------------------------
    def install(self) -> None:
        self.handles += [
            optim_hooks.register_optimizer_step_pre_hook(self._pre_step),
            optim_hooks.register_optimizer_step_post_hook(self._post_step),
            module_hooks.register_module_parameter_registration_hook(self._param_made),
        ]
        self.watch_modules(True)
        self.s.on_grad_output = self._grad_output
        self._wrap(nn.Module, "__setattr__", self._on_setattr)
        for name in ("to", "cuda", "cpu"):
            self._wrap(nn.Module, name, self._on_move)
        self._wrap(nn.Module, "train", self._on_train)
        self._wrap(nn.Module, "zero_grad", self._on_zero_grad, quiet=True)
        self._wrap(torch.optim.Optimizer, "zero_grad", self._on_zero_grad, quiet=True)
        self._wrap(torch.optim.Optimizer, "__init__", self._on_optimizer_made)
        self._after(torch.autograd, "backward", self._after_backward)
        self._after(torch.autograd, "grad", lambda *args, **kwargs: self._after_backward())

    def watch_modules(self, on: bool) -> None:
        """Module call hooks, only in watched steps: any global forward hook sends every module call
        through `nn.Module`'s slow path."""
        if on and not self.module_handles:
            self.module_handles = [
                module_hooks.register_module_forward_pre_hook(self._forward_pre),
                module_hooks.register_module_forward_hook(self._forward_post, always_call=True),
            ]
        elif not on:
            for h in self.module_handles:
                h.remove()
            self.module_handles = []
            self.depth = 0

    def uninstall(self) -> None:
        self.watch_modules(False)
        for h in self.handles:
            h.remove()
        for undo in reversed(self.undo):
            undo()
        self.s.on_grad_output = None

    def _wrap(self, owner: type, name: str, before: Callable[..., None], quiet: bool = False) -> None:
        """`before()` ahead of `owner.name`; a `quiet` method (one that makes no tensor) runs without the
        probe's modes."""
        original = owner.__dict__[name]
        depth = [0]  # `train()` recurses into children: record the outermost call only

        def wrapper(this: object, *args: Any, **kwargs: Any) -> Any:
            if not self.s.busy and not depth[0]:
                self.s.busy += 1
                try:
                    before(this, *args, **kwargs)
                finally:
                    self.s.busy -= 1
            paused = quiet and self.pause is not None and self.pause()
            depth[0] += 1
            try:
                return original(this, *args, **kwargs)
            finally:
                depth[0] -= 1
                if paused and self.resume is not None:
                    self.resume(None)

        functools.update_wrapper(wrapper, original, assigned=(), updated=())  # only `__wrapped__`
        setattr(owner, name, wrapper)
        self.undo.append(lambda: setattr(owner, name, original))

    def _after(self, owner: object, name: str, after: Callable[..., None]) -> None:
        """Call `after()` when `owner.name` returns (Tensor.backward goes through torch.autograd.backward)."""
        original = getattr(owner, name)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            out = original(*args, **kwargs)
            after(*args, **kwargs)
            return out

        functools.update_wrapper(wrapper, original, assigned=(), updated=())  # only `__wrapped__`
        setattr(owner, name, wrapper)
        self.undo.append(lambda: setattr(owner, name, original))

    def _site(self, callers: bool = False) -> Site | None:
        site = self.s.attributor.site(callers=callers)
        return Site(site.path, site.line, None, site.callers, site.code, site.lasti) if site is not None else None

    # -- construction-time records --------------------------------------------------------------
    def _param_made(self, module: nn.Module, name: str, param: nn.Parameter | None) -> None:
        if param is None:
            return
        site = self._site()
        if site is not None:
            self.made[id(param)] = (weakref.ref(param), site, type(module).__name__, name)

    def _on_setattr(self, module: nn.Module, name: str, value: object) -> None:
        if isinstance(value, torch.Tensor) and not isinstance(value, nn.Parameter):
            site = self._site()
            if site is not None:
                self.attr_sites[(id(module), name)] = site

    def _on_move(self, module: nn.Module, *args: object, **kwargs: object) -> None:
        site = self._site()
        if self.on_move is not None:
            self.on_move(getattr(module, "module", module), site)
        if site is not None:
            for m in module.modules():
                self.move_sites[id(m)] = site

    def _on_train(self, module: nn.Module, mode: bool = True) -> None:
        site = self._site(callers=True)
        for m in module.modules():
            if not mode and site is not None:
                self.eval_sites[id(m)] = site
            elif mode:
                self.eval_sites.pop(id(m), None)

    def _on_optimizer_made(self, optimizer: torch.optim.Optimizer, *args: object, **kwargs: object) -> None:
        self.optimizer_made = True

    def _after_backward(
        self, tensors: torch.Tensor | Iterable[object] | None = None, *args: object, **kwargs: object
    ) -> None:
        """Without an optimizer (manual SGD: `p.data.add_(-lr, p.grad)`) each backward() is a step."""
        if self.optimizer_made or self.s.busy:
            return
        self.s.busy += 1
        try:
            if self.s.watching:
                self._manual_update(tensors)
            self._end_step()
        finally:
            self.s.busy -= 1
        self._stop_at_limit()

    def _manual_update(self, tensors: torch.Tensor | Iterable[object] | None) -> None:
        """A step of a loop without an optimizer: parameters updated in place since the last backward()
        (`w -= lr * w.grad` under no_grad bumps `w`'s version) whose gradient was not cleared in between
        got this backward's gradient on top of the last one."""
        rec = self.optimizers.get("manual")
        if rec is None:
            rec = self.optimizers["manual"] = _Record("manual update")
        step = rec.steps + 1
        rec.sites[step] = self._site(callers=True)
        roots = [tensors] if isinstance(tensors, torch.Tensor) else list(tensors or ())
        for leaf in graph_leaves(t.grad_fn for t in roots if isinstance(t, torch.Tensor)):
            if id(leaf) not in self.params:
                self._track(leaf)
                self.versions[id(leaf)] = leaf._version
        with torch._C.DisableTorchFunction():
            for pid, version in list(self.versions.items()):
                st, param = self.params[pid], self.leaves[pid]()
                if param is None:
                    continue
                updated = param._version != version
                if updated and st.stepped_with_grad and st.fresh and not st.cleared:
                    rec.accumulated.setdefault(step, set()).add(pid)
                grad = param.grad
                st.seen = (id(grad), grad._version) if grad is not None else None
                st.stepped, st.fresh, st.cleared = True, False, False
                st.stepped_with_grad = grad is not None
                self.versions[pid] = param._version
        rec.steps += 1

    def _on_zero_grad(self, owner: object, *args: object, **kwargs: object) -> None:
        if self.s.watching:
            self.zero_grad_site = self._site(callers=True)

    # -- module calls ---------------------------------------------------------------------------
    def _forward_pre(self, module: nn.Module, args: tuple[object, ...]) -> None:
        s = self.s
        if s.busy or not s.watching:
            return None
        self.depth += 1
        s.busy += 1
        try:
            if self.depth == 1:
                if not module.training:
                    self.eval_roots[id(module)] = (weakref.ref(module), self._site(callers=True))
                if s.track_devices and self.split_checked.get(id(module)) != self.steps:
                    self.split_checked[id(module)] = self.steps
                    self._device_split(module)
            if s.track_devices:
                self._inputs_vs_weights(module, args)
        finally:
            s.busy -= 1
        return None

    def _forward_post(self, module: nn.Module, args: tuple[object, ...], output: object) -> None:
        if self.depth > 0 and not self.s.busy:
            self.depth -= 1
        return None

    def _inputs_vs_weights(self, module: nn.Module, args: tuple[object, ...]) -> None:
        own: list[tuple[str, torch.Tensor]] = [(n, p) for n, p in module.named_parameters(recurse=False)]
        own += [(n, b) for n, b in module.named_buffers(recurse=False) if b is not None]
        if not own:
            return
        dev = self.s.device
        weight_devs = {dev(t) for _n, t in own}
        if len(weight_devs) != 1:
            return
        (wdev,) = weight_devs
        inputs = [a for a in args if isinstance(a, torch.Tensor) and a.dim() > 0]
        bad = [(i, a) for i, a in enumerate(inputs) if dev(a) != wdev]
        if not bad:
            return
        names = ", ".join(n for n, _t in own)
        what = "input" if len(inputs) == 1 else ", ".join(f"input {i}" for i, _a in bad)
        self.s.obs.add(
            "device-mismatch",
            self._site(callers=True),
            f"{what} on {dev(bad[0][1])}, {names} on {wdev} (`{type(module).__name__}`)",
            {
                "op": f"{type(module).__name__}.forward",
                "inputs": [f"input {i}" for i, _a in bad] + [n for n, _t in own],
                "devices": [dev(a) for _i, a in bad] + [dev(t) for _n, t in own],
                "shapes": [list(a.shape) for _i, a in bad] + [list(t.shape) for _n, t in own],
                "sites": self.s.origins.sites(a for _i, a in bad),
            },
        )

    def _device_split(self, root: nn.Module) -> None:
        dev = self.s.device
        entries: list[tuple[str, str, str, Site | None, nn.Module]] = []  # (qualified name, what, device, site, owner)
        for mname, m in root.named_modules():
            prefix = f"{mname}." if mname else ""
            for n, p in m.named_parameters(recurse=False):
                made = self.made.get(id(p))
                entries.append((prefix + n, "parameter", dev(p), made[1] if made else None, m))
            for n, b in m.named_buffers(recurse=False):
                if b is not None:
                    entries.append((prefix + n, "buffer", dev(b), None, m))
            for n, v in vars(m).items():
                if isinstance(v, torch.Tensor) and not n.startswith("_"):
                    entries.append((prefix + n, "attribute", dev(v), self.attr_sites.get((id(m), n)), m))
        counts: dict[str, int] = {}
        for e in entries:
            counts[e[2]] = counts.get(e[2], 0) + 1
        if len(counts) < 2:
            return
        majority = max(counts, key=lambda d: (counts[d], d != "cpu"))
        odd = [e for e in entries if e[2] != majority]
        sites: list[Site] = []
        for _n, _w, _d, site, m in odd:
            for candidate in (site, self.move_sites.get(id(m))):
                if candidate is not None and candidate not in sites:
                    sites.append(candidate)
        for m in root.modules():  # every .to() in the tree: a partial move is one of them
            moved = self.move_sites.get(id(m))
            if moved is not None and moved not in sites:
                sites.append(moved)
        shown = ", ".join(f"{n} ({w}, {d})" for n, w, d, _s, _m in odd[:4]) + (" ..." if len(odd) > 4 else "")
        self.s.obs.add(
            "module-device-split",
            self._site(callers=True),
            f"`{type(root).__name__}`: {len(odd)} of {len(entries)} tensors are not on {majority}: {shown}",
            {
                "module": type(root).__name__,
                "majority": majority,
                "tensors": [{"name": n, "what": w, "device": d} for n, w, d, _s, _m in odd],
                "devices": sorted(counts),
                "sites": [x.to_json() for x in sites],
            },
        )

    # -- gradients ------------------------------------------------------------------------------
    def _watch(self, opt: torch.optim.Optimizer) -> _Record:
        rec = self.optimizers.get(id(opt))
        if rec is None:
            rec = self.optimizers[id(opt)] = _Record(type(opt).__name__)
            for p in self._opt_params(opt):
                if id(p) not in self.params and p.requires_grad:
                    self._track(p)
        return rec

    def _track(self, p: torch.Tensor) -> None:
        """Follow a parameter's gradient: was it cleared before the next backward adds to it?"""
        self.params[id(p)] = _Param()
        ref = self.leaves[id(p)] = weakref.ref(p)
        p.register_hook(self._grad_hook(ref))  # type: ignore[no-untyped-call]  # unannotated in torch
        p.register_post_accumulate_grad_hook(self._accumulated_hook)  # type: ignore[no-untyped-call]  # unannotated in torch

    @staticmethod
    def _opt_params(opt: torch.optim.Optimizer) -> list[torch.Tensor]:
        return [p for g in opt.param_groups for p in g["params"]]

    def _grad_hook(self, pref: weakref.ref[torch.Tensor]) -> Callable[[torch.Tensor], None]:
        """Before a new gradient is added: has .grad changed since we last saw it (i.e. been cleared)?"""

        def hook(grad: torch.Tensor) -> None:
            p = pref()
            if p is None:
                return None
            st = self.params.get(id(p))
            if st is None or self.s.busy:
                return None
            if not self.s.watching:
                st.got_grad = True
                return None
            self.s.busy += 1
            try:
                st.look(p.grad)
            finally:
                self.s.busy -= 1
            st.got_grad = st.fresh = True
            return None

        return hook

    def _accumulated_hook(self, p: torch.Tensor) -> None:
        st = self.params.get(id(p))
        if st is not None and not self.s.busy and self.s.watching:
            self.s.busy += 1
            try:
                st.seen = (id(p.grad), p.grad._version) if p.grad is not None else None
            finally:
                self.s.busy -= 1

    def _pre_step(self, opt: torch.optim.Optimizer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        s = self.s
        s.in_step = True
        s.busy += 1
        try:
            rec = self._watch(opt)
            if s.watching:
                self._check_before_step(opt, rec)
            if self.pause is not None:
                self.pause(opt, args, kwargs)
        finally:
            s.busy -= 1

    def _check_before_step(self, opt: torch.optim.Optimizer, rec: _Record) -> None:
        """Gradients carried over or all zero, and models in eval mode, at a watched step."""
        rec.sites[rec.steps + 1] = self._site(callers=True)
        params = [p for p in self._opt_params(opt) if id(p) in self.params]
        step = rec.steps + 1
        for p in params:
            st = self.params[id(p)]
            if p.grad is not None:
                st.got_grad = True
                st.look_before_step(p.grad)
            elif st.seen is not None:
                st.cleared, st.seen = True, None
            if st.stepped_with_grad and st.fresh and not st.cleared:
                rec.accumulated.setdefault(step, set()).add(id(p))
        fresh = [
            p
            for p in params
            if (self.params[id(p)].fresh or not self.params[id(p)].stepped) and self.params[id(p)].got_grad
        ]
        if fresh and all(p.grad is None or not bool(p.grad.any()) for p in fresh):
            rec.zero.append((rec.steps + 1, self.zero_grad_site))
        held = {id(p) for p in params}
        for ref, site in list(self.eval_roots.values()):
            m = ref()
            if m is not None and not m.training and any(id(p) in held for p in m.parameters()):
                rec.eval.append((rec.steps + 1, m, self.eval_sites.get(id(m)) or site))

    def _post_step(self, opt: torch.optim.Optimizer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        s = self.s
        s.in_step = False
        if self.resume is not None:
            self.resume(opt)
        s.busy += 1
        try:
            rec = self._watch(opt)
            rec.steps += 1
            with torch._C.DisableTorchFunction():  # every step: reading `.grad` need not pass through our mode
                for p in self._opt_params(opt):
                    st = self.params.get(id(p))
                    if st is not None:
                        grad = p.grad
                        st.seen = (id(grad), grad._version) if grad is not None else None
                        st.stepped, st.fresh, st.cleared = True, False, False
                        st.stepped_with_grad = grad is not None
            self.eval_roots.clear()
            self._end_step()
        finally:
            s.busy -= 1
        self._stop_at_limit()

    def _end_step(self) -> None:
        self.steps += 1
        self.s.obs.step = self.steps + 1
        if self.s.watching:
            self._measure_graphs()
        if self.on_step is not None:
            self.on_step()

    def _stop_at_limit(self) -> None:
        if self.max_steps is not None and self.steps >= self.max_steps:
            raise Stop("max-steps")

    # -- graphs kept alive ----------------------------------------------------------------------
    def _grad_output(self, t: torch.Tensor) -> None:
        site = self.s.attributor.site()
        if site is not None and site.path == self.script:
            key = id(t)
            self.graph_live[key] = (weakref.ref(t, lambda _r: self.graph_live.pop(key, None)), site)

    def _measure_graphs(self) -> None:
        sizes: dict[Site, tuple[int]] = {}
        for ref, site in list(self.graph_live.values())[-200:]:
            t = ref()
            if t is None or t.grad_fn is None:
                continue
            n = _graph_size(t.grad_fn)
            if n > sizes.get(site, (0,))[0]:
                sizes[site] = (n,)
        for site, (n,) in sizes.items():
            self.graph_sizes.setdefault(site, []).append((self.steps, n))

    def records(self) -> int:
        """How many things the step checks recorded so far (gradients carried over or all zero, eval mode,
        a graph that grew): a watched step that adds none showed nothing new (sampling.py)."""
        found = sum(len(r.accumulated) + len(r.zero) + len(r.eval) for r in self.optimizers.values())
        grown = sum(b[1] > a[1] for h in self.graph_sizes.values() for a, b in zip(h, h[1:]))
        return found + grown

    # -- end of run -----------------------------------------------------------------------------
    def finish(self) -> None:
        obs = self.s.obs
        obs.summaries.clear()
        for rec in self.optimizers.values():
            name = rec.name
            by_step_site: dict[Site, dict[int, set[int]]] = {}
            for step, ids in rec.accumulated.items():
                site = rec.sites.get(step)
                if site is not None:
                    by_step_site.setdefault(site, {})[step] = ids
            for site, acc in by_step_site.items():
                steps = sorted(acc)
                n = len(set().union(*acc.values()))
                span = f"steps {steps[0]}–{steps[-1]}" if len(steps) > 1 else f"step {steps[0]}"
                ran = sum(1 for st, where in rec.sites.items() if where == site and st > 1)
                obs.replace(
                    "grads-not-cleared",
                    site,
                    name,
                    f"gradients of {n} parameters accumulated across {span}"
                    + (": never cleared" if len(steps) == ran else f" ({len(steps)} of {ran} steps)"),
                    {"optimizer": name, "parameters": n, "steps": steps},
                    set(steps),
                    steps[0],
                )
            if rec.zero:
                steps = [st for st, _z in rec.zero]
                site = rec.sites.get(steps[0])
                zsite = next((z for _st, z in rec.zero if z is not None), None)
                extra = [zsite.to_json()] if zsite else []
                obs.replace(
                    "grads-zero-at-step",
                    zsite or site,
                    name,
                    f"all gradients were zero at step {steps[0]}"
                    + (f" (and {len(steps) - 1} more steps)" if len(steps) > 1 else "")
                    + ": cleared between backward and step",
                    {
                        "optimizer": name,
                        "steps": steps,
                        "sites": extra + ([site.to_json()] if site else []),
                    },
                    set(steps),
                    steps[0],
                )
            by_site: dict[tuple[Site | None, str], list[int]] = {}
            for st, m, esite in rec.eval:
                by_site.setdefault((esite, type(m).__name__), []).append(st)
            for (esite, cls), steps in by_site.items():
                obs.replace(
                    "eval-mode-in-training",
                    esite,
                    cls,
                    f"`{cls}` was in eval mode while {name} stepped its parameters (step {steps[0]}"
                    + (f" and {len(steps) - 1} more" if len(steps) > 1 else "")
                    + ")",
                    {
                        "module": cls,
                        "optimizer": name,
                        "steps": steps,
                        "sites": [w.to_json() for w in {rec.sites.get(st) for st in steps} if w],
                    },
                    set(steps),
                    steps[0],
                )
        self._finish_graphs()
        self._finish_params()

    def _finish_graphs(self) -> None:
        for site, history in self.graph_sizes.items():
            sizes = [n for _st, n in history]
            if len(sizes) >= 3 and all(b > a for a, b in zip(sizes[-3:], sizes[-2:])) and sizes[-1] > 2 * sizes[0]:
                steps = {st for st, _n in history}
                self.s.obs.replace(
                    "graph-retained",
                    site,
                    None,
                    f"an autograd graph created here grows every step ({sizes[0]} -> {sizes[-1]} nodes): "
                    "it keeps every previous step's graph alive; use `.item()` or `.detach()`",
                    {"graph_nodes": sizes, "steps": sorted(steps)},
                    steps,
                    history[0][0] + 1,
                )

    def _finish_params(self) -> None:
        total = sum(r.steps for r in self.optimizers.values())
        if not total:
            return
        unheld: dict[Site, list[str]] = {}
        never: dict[Site, list[str]] = {}
        for pid, (ref, site, cls, name) in self.made.items():
            p = ref()
            if p is None or not p.requires_grad:
                continue
            st = self.params.get(pid)
            if st is None and p.grad is not None:
                unheld.setdefault(site, []).append(f"{cls}.{name}")
            elif st is not None and not st.got_grad:
                never.setdefault(site, []).append(f"{cls}.{name}")
        for site, names in unheld.items():
            self.s.obs.replace(
                "param-never-updated",
                site,
                "no-optimizer",
                f"{len(names)} parameters ({', '.join(names[:3])}{' ...' if len(names) > 3 else ''}) get gradients "
                "but no optimizer holds them: they never train",
                {"parameters": names, "reason": "no-optimizer"},
                set(range(1, total + 1)),
                1,
            )
        for site, names in never.items():
            self.s.obs.replace(
                "param-never-updated",
                site,
                "no-gradient",
                f"{len(names)} parameters ({', '.join(names[:3])}{' ...' if len(names) > 3 else ''}) never received "
                f"a gradient in {total} steps",
                {"parameters": names, "reason": "no-gradient"},
                set(range(1, total + 1)),
                1,
            )


def _graph_size(fn: torch.autograd.graph.Node) -> int:
    seen = {fn}
    todo = [fn]
    while todo and len(seen) < _GRAPH_CAP:
        for nxt, _i in todo.pop().next_functions:
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return len(seen)
