"""The two interception layers of the child process.

`FunctionMode` (outer, a TorchFunctionMode) sees the Python-level calls: moves
(`.to/.cuda/.cpu`), factories with `device=`, `.device`, host syncs and `.view`.
`DispatchMode` (inner, a TorchDispatchMode) sees every aten op, forward, backward and
optimizer, with real shapes and strides: it checks that inputs share a device,
propagates simulated device tags, and spots implicit copies and conv memory formats.
Between watched windows (see sampling.py) only the function mode stays, and only under
simulated CUDA, to keep the tags right at the level of torch functions.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Collection, Iterable, Iterator
from typing import Any

import torch
from torch._ops import OpOverload, OpOverloadPacket
from torch.autograd.graph import Node
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from torchlint.probe.device_tags import DeviceTags, Origins, parse_device
from torchlint.probe.observations import Observations
from torchlint.probe.simulated_devices import check_ordinal
from torchlint.probe.sites import Attributor

Tensor = torch.Tensor
aten = torch.ops.aten

# PyTorch's own legal device mixes: copies between devices and CPU index tensors.
_CROSS_DEVICE = {
    aten.copy_,
    aten._to_copy,
    aten._copy_from,
    aten._copy_from_and_resize,
    aten.set_,
    aten.to,
    aten.lift_fresh,
    aten.lift_fresh_copy,
    aten.detach,
    aten.alias,
}
_CPU_INDEX_OK = {aten.index, aten.index_put_, aten.index_put, aten._index_put_impl_, aten._unsafe_index}
# Arguments PyTorch wants on the CPU next to CUDA inputs (packed sequences keep their sizes there), and
# outputs it makes on the CPU whatever its inputs' device; by op name, for both modes.
_CPU_ARGUMENTS = {
    "_pack_padded_sequence": {"lengths"},
    "_pad_packed_sequence": {"batch_sizes"},
    "lstm": {"batch_sizes"},
    "gru": {"batch_sizes"},
    "rnn_tanh": {"batch_sizes"},
    "rnn_relu": {"batch_sizes"},
}
_CPU_OUTPUTS = {"_pack_padded_sequence": {1}, "_pad_packed_sequence": {1}}
_CONVS = {aten.convolution, aten._convolution, aten.convolution_backward}
# Torch functions that copy a non-contiguous input behind the user's back.
_IMPLICIT_COPY = {"reshape", "flatten", "matmul", "reshape_as", "einsum", "tensordot", "unflatten"}
_SYNCS = {
    "item": "`.item()`",
    "tolist": "`.tolist()`",
    "__bool__": "a truth test (`if tensor`, `bool(tensor)`)",
    "__float__": "`float(tensor)`",
    "__int__": "`int(tensor)`",
    "__index__": "using a tensor as an index",
    "numpy": "`.numpy()`",
    "__repr__": "printing a tensor",
    "__format__": "formatting a tensor",
    "nonzero": "`.nonzero()` (data-dependent shape)",
    "argwhere": "`argwhere` (data-dependent shape)",
    "masked_select": "`masked_select` (data-dependent shape)",
    "unique": "`unique` (data-dependent shape)",
    "unique_consecutive": "`unique_consecutive` (data-dependent shape)",
    "equal": "`torch.equal`",
}
# torch's own machinery that must sync by design (GradScaler checks for infs once per step).
_OWN_SYNCS = ("torch.amp.", "torch.cuda.amp.")
# Copies smaller than this cost less than the call itself: not worth a word.
IMPLICIT_COPY_MIN_BYTES = 64 * 1024
_MOVES = {"to", "cuda", "cpu"}
# Factories whose result lands on the default device unless told otherwise: their line is
# remembered so that a mismatch can point at where its CPU input was made.
_FACTORIES = {
    "randn",
    "rand",
    "zeros",
    "ones",
    "empty",
    "full",
    "arange",
    "linspace",
    "tensor",
    "randint",
    "randperm",
    "eye",
    "as_tensor",
    "from_numpy",
}
# Arithmetic on a fresh factory result (`torch.randn(n, d) * 0.01`) makes a new storage that
# still comes from the factory's line: it inherits that origin.
_ARITHMETIC = {
    "__mul__",
    "__rmul__",
    "mul",
    "__add__",
    "__radd__",
    "add",
    "__sub__",
    "__rsub__",
    "sub",
    "__truediv__",
    "div",
    "__neg__",
    "neg",
    "float",
    "double",
    "half",
    "bfloat16",
    "requires_grad_",
}
_BACKWARD = {"backward", "grad"}
# Tensor methods whose answer names the device: simulated CUDA answers them itself.
_QUERIES = {"get_device", "type"}
# The names `_follow` looks at before running a function (a property read, a move, a query).
_FOLLOW_SPECIAL = {"__get__", *_MOVES, *_QUERIES}
_DEVICES: dict[str, torch.device] = {}  # `.device` answers: one object per logical device
# A tensor argument of an aten op: (argument index, or name for a keyword; index in a list argument or
# None; the tensor; its device).
_Input = tuple[int | str, int | None, Tensor, str]


def _mutates(func: OpOverload, cache: dict[OpOverload, bool] = {}) -> bool:  # noqa: B006 - a per-op memo
    hit = cache.get(func)
    if hit is None:
        hit = cache[func] = any(a.alias_info is not None and a.alias_info.is_write for a in func._schema.arguments)
    return hit


class State:
    """Shared by both modes and the hooks; `busy` makes the probe's own tensor work invisible."""

    def __init__(self, obs: Observations, attributor: Attributor, simulate: bool, track_devices: bool):
        self.obs = obs
        self.attributor = attributor
        self.simulate = simulate
        self.track_devices = track_devices or simulate
        self.tags = DeviceTags()
        self.origins = Origins()
        self.busy = 0
        self.current: str | None = None  # name of the torch function being run, for the dispatch mode
        self.current_args: tuple[object, ...] = ()
        self.devices_used: set[str] = set()  # on a real GPU: every device a tensor was moved to
        self.in_step = False  # inside optimizer.step(): grads meet params, mismatches there are echoes
        self.watching = True  # this step is watched in full (see sampling.py)
        self.on_grad_output: Callable[[Tensor], None] | None = None  # set by the training checks
        self.device_count = 1  # simulated CUDA devices: an index past them fails as on a GPU

    def device(self, t: Tensor) -> str:
        return self.tags.get(t) if self.simulate else _real(t)


def _real(t: Tensor) -> str:
    d = t.device
    return f"cuda:{d.index or 0}" if d.type == "cuda" else str(d)


def _parse_to(
    state: State, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[str | None, torch.dtype | None, bool, bool, torch.memory_format]:
    """(target device or None, dtype, non_blocking, copy, memory_format) of a .to/.cuda/.cpu call."""
    device: str | None = None
    dtype: torch.dtype | None = None
    flags: list[bool] = []
    if name == "cpu":
        device = "cpu"
    elif name == "cuda":
        arg = args[1] if len(args) > 1 else kwargs.get("device")
        device = parse_device(arg) if arg is not None else "cuda:0"
        if arg is not None and isinstance(arg, int):
            device = f"cuda:{arg}"
    else:
        for a in args[1:]:
            if isinstance(a, torch.dtype):
                dtype = a
            elif isinstance(a, Tensor):
                device, dtype = state.device(a), a.dtype
            elif isinstance(a, bool):
                flags.append(a)
            elif a is not None:
                device = parse_device(a) or device
        if kwargs.get("device") is not None:
            device = parse_device(kwargs["device"])
        if kwargs.get("dtype") is not None:
            dtype = kwargs["dtype"]
        other = kwargs.get("other")
        if isinstance(other, Tensor):
            device, dtype = state.device(other), other.dtype
    non_blocking = kwargs.get("non_blocking", flags[0] if flags else False)
    copy = kwargs.get("copy", flags[1] if len(flags) > 1 else False)
    return device, dtype, non_blocking, copy, kwargs.get("memory_format", torch.preserve_format)


def _first_tensor(args: tuple[object, ...], kwargs: dict[str, object]) -> Tensor | None:
    for a in args:
        if isinstance(a, Tensor):
            return a
    for a in kwargs.values():
        if isinstance(a, Tensor):
            return a
    return None


def _tensors_out(out: object, name: str = "") -> Iterator[Tensor]:
    """The tensors of an op's result, but those PyTorch makes on the CPU whatever the device (`_CPU_OUTPUTS`)."""
    if isinstance(out, Tensor):
        yield out
    elif isinstance(out, (list, tuple)):
        cpu = _CPU_OUTPUTS.get(name, ())
        for k, o in enumerate(out):
            if isinstance(o, Tensor) and k not in cpu:
                yield o


def _is_argument(out: object, args: tuple[object, ...], kwargs: dict[str, object]) -> bool:
    """`out` is one of the arguments (`out=`, an input handed back): not a new tensor."""
    for a in args:
        if a is out:
            return True
    for a in kwargs.values():
        if a is out:
            return True
    return False


def graph_leaves(roots: Iterable[Node | None]) -> Iterator[Tensor]:
    """The tensors whose `.grad` a backward from these autograd graph roots accumulates into."""
    seen: set[Node] = set()
    todo = [fn for fn in roots if fn is not None]
    while todo:
        node = todo.pop()
        leaf = getattr(node, "variable", None)
        if isinstance(leaf, Tensor):
            yield leaf
            continue
        for nxt, _i in node.next_functions:
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)


class LeafGrads:
    """Gradients are made by the autograd engine in C++, where no torch function mode sees them: each
    watched `backward()` hooks the leaves it reached (and tags a gradient one of them got before), and
    between watched windows the hook gives a new `.grad` its leaf's simulated device."""

    def __init__(self, state: State) -> None:
        self.s = state
        self._hooked: dict[int, weakref.ref[Tensor]] = {}  # id(leaf) -> the leaf
        self.unwatched: Node | None = None  # the graph of the last backward() between windows, until the next window

    def after_backward(self, root: object) -> None:
        self._walk(root.grad_fn if isinstance(root, Tensor) else None)

    def window_opens(self) -> None:
        """Code after `optimizer.step()` runs watched but may read the gradients of the unwatched step."""
        fn, self.unwatched = self.unwatched, None
        self._walk(fn)

    def _walk(self, fn: Node | None) -> None:
        for leaf in graph_leaves((fn,)):
            known = self._hooked.get(id(leaf))
            if known is None or known() is not leaf:
                self._hooked[id(leaf)] = weakref.ref(leaf)
                leaf.register_post_accumulate_grad_hook(self._accumulated)  # type: ignore[no-untyped-call]  # unannotated in torch
                self._tag(leaf)  # a gradient made between windows, before the hook, and kept

    def _accumulated(self, leaf: Tensor) -> None:
        if not self.s.watching:
            self._tag(leaf)

    def _tag(self, leaf: Tensor) -> None:
        grad = leaf.grad
        if grad is not None:
            dev = self.s.tags.simulated(leaf)
            if dev is not None:
                self.s.tags.set(grad, dev)


class FunctionMode(TorchFunctionMode):
    def __init__(self, state: State) -> None:
        super().__init__()
        self.s = state
        self._props = {id(torch.Tensor.device): "device", id(torch.Tensor.is_cuda): "is_cuda"}
        self.leaf_grads = LeafGrads(state)

    def __torch_function__(
        self,
        func: Callable[..., Any],
        types: Collection[type],
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        s = self.s
        if not s.watching and not s.busy:
            return self._follow(func, args, kwargs or {})
        if s.busy:
            return func(*args, **(kwargs or {}))
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        if name == "__get__":
            return self._get(func, args)
        if name == "__set__":
            return func(*args, **kwargs)
        if name in _QUERIES and s.simulate:
            return self._query(func, name, args, kwargs)
        if name in _MOVES and args and isinstance(args[0], Tensor):
            return self._move(func, name, args, kwargs)
        if name in _SYNCS or name in ("__getitem__", "where"):
            self._sync(name, args, kwargs)
        target = origin = None
        if s.simulate and kwargs.get("device") is not None:
            target = parse_device(kwargs["device"])
            if target and target.startswith("cuda"):
                check_ordinal(target, s.device_count)
                kwargs = {**kwargs, "device": "cpu"}
        elif s.track_devices and name in _FACTORIES:
            origin = s.attributor.site()
        outer = (s.current, s.current_args)
        s.current, s.current_args = name, args
        try:
            out = func(*args, **kwargs)
        except RuntimeError as exc:
            if name in ("view", "view_as") and "view size is not compatible" in str(exc):
                self._bad_view(args, exc)
            raise
        finally:
            s.current, s.current_args = outer
        if target is not None:
            for t in _tensors_out(out):
                s.tags.set(t, target)
        if s.simulate and name in _CPU_OUTPUTS:  # the ops inside followed the inputs' device
            for k in _CPU_OUTPUTS[name]:
                s.tags.set(out[k], "cpu")
        if origin is not None:
            s.origins.record(out, origin)
        elif name in _ARITHMETIC and s.track_devices and args:
            s.origins.inherit(out, args[0])
        if s.simulate and name in ("from_numpy", "as_tensor", "frombuffer", "asarray") and isinstance(out, Tensor):
            s.tags.set(out, _real(out))
        if s.on_grad_output is not None and isinstance(out, Tensor) and out.grad_fn is not None:
            s.on_grad_output(out)
        if name == "backward" and s.simulate and args:
            self.leaf_grads.after_backward(args[0])
        return out

    def _get(self, func: Callable[..., Any], args: tuple[Any, ...]) -> Any:
        """A tensor property: `.device` and `.is_cuda` answer with the simulated device."""
        prop = self._props.get(id(getattr(func, "__self__", None))) if self.s.simulate else None
        if prop is None or not isinstance(args[0], Tensor):
            return func(*args)
        dev = self.s.tags.get(args[0])
        if prop == "is_cuda":
            return dev.startswith("cuda")
        device = _DEVICES.get(dev)
        if device is None:
            device = _DEVICES[dev] = torch.device(dev)
        return device

    def _follow(self, func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Between windows (simulated CUDA only): keep device tags right, one torch function at a time, and
        nothing else. A new output takes the device of its first tensor input on a simulated device, as the
        dispatch mode would tag it op by op; the gradients a `backward()` accumulated take their leaf's
        device. Every torch call of an unwatched step comes here: the common case (no `device=`, one tensor
        out) takes the fewest steps."""
        name = getattr(func, "__name__", "")
        if name in _FOLLOW_SPECIAL:
            if name == "__get__":
                return self._get(func, args)
            if name in _MOVES and args and isinstance(args[0], Tensor):
                return self._move(func, name, args, kwargs)
            if name in _QUERIES:
                return self._query(func, name, args, kwargs)
        if kwargs and kwargs.get("device") is not None:
            return self._follow_device(func, args, kwargs)
        out = func(*args, **kwargs)
        if isinstance(out, Tensor):
            if args and out is args[0]:
                return out  # in place
            source = self.s.tags.first_simulated(args, kwargs)
            if source is not None and not _is_argument(out, args, kwargs):
                self.s.tags.set(out, source)
            return out
        if isinstance(out, (list, tuple)) and out and not (args and out is args[0]):
            source = self.s.tags.first_simulated(args, kwargs)
            if source is not None:
                inputs = {id(a) for a in (*args, *kwargs.values())}
                for t in _tensors_out(out, name):
                    if id(t) not in inputs:
                        self.s.tags.set(t, source)
        elif name == "backward" and args:
            self.leaf_grads.unwatched = getattr(args[0], "grad_fn", None)
        return out

    def _follow_device(self, func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """A `device=` argument between windows: a simulated device is made on the CPU and tagged."""
        target = parse_device(kwargs["device"])
        if target and target.startswith("cuda"):
            check_ordinal(target, self.s.device_count)
            kwargs = {**kwargs, "device": "cpu"}
        out = func(*args, **kwargs)
        if target is not None and out is not None and not (args and out is args[0]):
            for t in _tensors_out(out):
                self.s.tags.set(t, target)
        return out

    def _move(self, func: Callable[..., Any], name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        s = self.s
        t = args[0]
        target, dtype, non_blocking, copy, fmt = _parse_to(s, name, args, kwargs)
        src = s.device(t)
        if target == "cpu" and src.startswith("cuda") and s.watching and not s.attributor.caller_is_library():
            self._record_sync(name, t)
        if not s.simulate:
            if target:
                s.devices_used.add(target)
            return func(*args, **kwargs)
        check_ordinal(target, s.device_count)
        if target is None or target == src:  # same logical device: no move (a library's `.cpu()` moves too)
            if name in ("cuda", "cpu") or (dtype is None and not copy and fmt is torch.preserve_format):
                return t
            out = t.to(dtype=dtype, copy=copy, memory_format=fmt)
            s.tags.set(out, src)
            return out
        out = t.to(dtype=dtype, non_blocking=non_blocking, copy=True, memory_format=fmt)
        s.tags.set(out, target)
        return out

    def _query(self, func: Callable[..., Any], name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """`get_device()` and `type()` answer with the simulated device; `type("torch.cuda.X")` converts and
        moves."""
        t = args[0]
        dev = self.s.tags.get(t)
        if name == "get_device":
            return int(dev.split(":")[1]) if dev.startswith("cuda:") else -1
        target = args[1] if len(args) > 1 else kwargs.get("dtype")
        if target is None:
            real = func(t)
            return real.replace("torch.", "torch.cuda.", 1) if dev.startswith("cuda") else real
        rest = {k: v for k, v in kwargs.items() if k != "dtype"}
        if isinstance(target, torch.dtype):  # a dtype keeps the device
            out = func(t, target, **rest)
            self.s.tags.set(out, dev)
            return out
        wanted = target if isinstance(target, str) else f"{target.__module__}.{target.__name__}"
        if ".cuda." not in wanted:  # a CPU type: a copy on the CPU
            out = func(t, target, **rest)
            if dev.startswith("cuda"):
                out = out.clone() if out is t else out
                self.s.tags.set(out, "cpu")
            return out
        out = func(t, wanted.replace("torch.cuda.", "torch.", 1))
        self.s.tags.set(out, dev if dev.startswith("cuda") else "cuda:0")
        return out

    def _sync(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        t = args[0] if args and isinstance(args[0], Tensor) else _first_tensor(args, kwargs)
        if t is None:
            return
        if name == "__getitem__":
            idx = args[1] if len(args) > 1 else None
            items = idx if isinstance(idx, tuple) else (idx,)
            if not any(isinstance(i, Tensor) and i.dtype == torch.bool for i in items):
                return
            label = "boolean-mask indexing (data-dependent shape)"
        elif name == "where":
            if len(args) + len(kwargs) != 1:
                return
            label = "`torch.where(cond)` (data-dependent shape)"
        else:
            label = _SYNCS[name]
        if self.s.device(t).startswith("cuda"):
            self._record_sync(name, t, label)

    def _record_sync(self, name: str, t: Tensor, label: str | None = None) -> None:
        label = label or ("`.cpu()`" if name == "cpu" else "`.to('cpu')`")
        s = self.s
        site = s.attributor.site(via=True, callers=True)
        if site is not None and site.via and site.via.startswith(_OWN_SYNCS):
            return
        dev = s.device(t)
        s.obs.add(
            "host-sync",
            site,
            f"{label} on a {dev} tensor makes the CPU wait for the GPU",
            {"op": name, "devices": [dev], "shapes": [list(t.shape)]},
            key=name,
        )

    def _bad_view(self, args: tuple[Any, ...], exc: RuntimeError) -> None:
        t = args[0]
        s = self.s
        size = list(args[1:]) if len(args) > 1 else []
        s.obs.add(
            "non-contiguous-view",
            s.attributor.site(callers=True),
            f"`.view` on a non-contiguous tensor of shape {tuple(t.shape)} (strides {tuple(t.stride())}) raised: "
            "use `.reshape(...)` or `.contiguous().view(...)`",
            {
                "op": "view",
                "shapes": [list(t.shape)],
                "strides": [list(t.stride())],
                "size": [list(x) if isinstance(x, (tuple, list, torch.Size)) else x for x in size],
                "error": str(exc).splitlines()[0],
            },
        )


class DispatchMode(TorchDispatchMode):  # type: ignore[no-untyped-call]  # unannotated in torch
    def __init__(self, state: State) -> None:
        super().__init__()  # type: ignore[no-untyped-call]  # unannotated in torch
        self.s = state

    def __torch_dispatch__(
        self,
        func: OpOverload,
        types: Collection[type],
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        kwargs = kwargs or {}
        s = self.s
        if s.busy:
            return func(*args, **kwargs)
        packet = func.overloadpacket
        if packet is aten.clone and s.current in _IMPLICIT_COPY:
            self._implicit_copy(args[0], s.current)
        elif packet in _CONVS:
            self._memory_formats(args)
        if not s.track_devices:
            return func(*args, **kwargs)
        found: list[tuple[int | str, int | None, Tensor]] = []
        for i, a in enumerate(args):
            if isinstance(a, Tensor):
                found.append((i, None, a))
            elif isinstance(a, (list, tuple)) and a:
                found.extend((i, j, e) for j, e in enumerate(a) if isinstance(e, Tensor))
        for k, a in kwargs.items():
            if isinstance(a, Tensor):
                found.append((k, None, a))
        devs = [(i, j, t, s.device(t)) for i, j, t in found]
        foreach = packet.__name__.startswith(("_foreach_", "_fused_"))
        # Inside backward a mismatch only echoes one already reported in forward.
        if len(devs) > 1 and packet not in _CROSS_DEVICE and s.current not in _BACKWARD and not s.in_step:
            self._check(func, packet, devs, foreach)
        out = func(*args, **kwargs)
        if s.simulate:
            self._tag(func, out, devs, kwargs, foreach)
        return out

    # -- devices -------------------------------------------------------------------------------
    def _check(self, func: OpOverload, packet: OpOverloadPacket, devs: list[_Input], foreach: bool) -> None:
        if foreach:
            groups: dict[int | None, list[_Input]] = {}
            for i, j, t, d in devs:
                if not (d == "cpu" and t.dim() == 0):
                    groups.setdefault(j, []).append((i, j, t, d))
            for group in groups.values():
                if len({d for *_, d in group}) > 1:
                    self._mismatch(func, group)
                    return
            return
        on_cpu = _CPU_ARGUMENTS.get(packet.__name__, ())
        names = [a.name for a in func._schema.arguments] if on_cpu else ()
        relevant = [
            (i, j, t, d)
            for i, j, t, d in devs
            if not (d == "cpu" and t.dim() == 0)
            and not (packet in _CPU_INDEX_OK and j is not None and d == "cpu")
            and not (d == "cpu" and isinstance(i, int) and i < len(names) and names[i] in on_cpu)
        ]
        if len({d for *_, d in relevant}) > 1:
            self._mismatch(func, relevant)

    def _mismatch(self, func: OpOverload, devs: list[_Input]) -> None:
        s = self.s
        names = [a.name for a in func._schema.arguments]

        def label(i: int | str, j: int | None) -> str:
            base = names[i] if isinstance(i, int) and i < len(names) else str(i)
            return base if j is None else f"{base}[{j}]"

        by_device: dict[str, list[str]] = {}
        for i, j, _t, d in devs:
            by_device.setdefault(d, []).append(label(i, j))
        parts = [f"{', '.join(v)} on {d}" for d, v in by_device.items()]
        op = str(func.overloadpacket)
        fn = s.current or op
        s.obs.add(
            "device-mismatch",
            s.attributor.site(callers=True),
            f"`{fn}` mixes devices: {'; '.join(parts)}",
            {
                "op": op,
                "function": fn,
                "inputs": [label(i, j) for i, j, _t, _d in devs],
                "devices": [d for *_, d in devs],
                "shapes": [list(t.shape) for _i, _j, t, _d in devs],
                "sites": s.origins.sites(t for _i, _j, t, _d in devs),
            },
        )

    def _tag(self, func: OpOverload, out: object, devs: list[_Input], kwargs: dict[str, Any], foreach: bool) -> None:
        s = self.s
        if foreach:
            if isinstance(out, (list, tuple)):
                first = [d for i, j, t, d in devs if i == 0 and j is not None]
                for o, d in zip(out, first):
                    if isinstance(o, Tensor) and d != "cpu":
                        s.tags.set(o, d)
            return
        if devs:
            # An explicit device= here is the real one (the function mode rewrote logical ones).
            if _mutates(func):
                return
            if func.overloadpacket in _CPU_INDEX_OK:  # an indexing result lives where the indexed tensor is
                target = next((d for i, j, _t, d in devs if i == 0 and j is None and d != "cpu"), None)
            else:
                target = next((d for *_, d in devs if d != "cpu"), None)
        else:
            target = self._ambient()
        if target is not None:
            for t in _tensors_out(out, func.overloadpacket.__name__):
                s.tags.set(t, target)

    def _ambient(self) -> str | None:
        """Factories inside a Python-implemented torch function follow that function's inputs."""
        for a in self.s.current_args:
            if isinstance(a, Tensor):
                d = self.s.tags.get(a)
                return d if d != "cpu" else None
        return None

    # -- layout --------------------------------------------------------------------------------
    def _implicit_copy(self, t: object, function: str) -> None:
        if not isinstance(t, Tensor) or t.is_contiguous():
            return
        s = self.s
        nbytes = t.numel() * t.element_size()
        if nbytes < IMPLICIT_COPY_MIN_BYTES:
            return
        s.obs.add(
            "implicit-copy",
            s.attributor.site(callers=True),
            f"`{function}` copied a non-contiguous tensor of shape {tuple(t.shape)} "
            f"(strides {tuple(t.stride())}): {nbytes} bytes per call",
            {"op": function, "shapes": [list(t.shape)], "strides": [list(t.stride())], "bytes": nbytes},
        )

    def _memory_formats(self, args: tuple[object, ...]) -> None:
        if len(args) < 2 or not isinstance(args[0], Tensor) or not isinstance(args[1], Tensor):
            return
        x, w = args[0], args[1]
        if x.dim() not in (4, 5) or w.dim() != x.dim():
            return
        fmt = torch.channels_last if x.dim() == 4 else torch.channels_last_3d

        def layout(t: Tensor) -> str | None:
            dense, last = t.is_contiguous(), t.is_contiguous(memory_format=fmt)
            return None if dense == last else ("channels_last" if last else "contiguous")

        lx, lw = layout(x), layout(w)
        if lx and lw and lx != lw:
            s = self.s
            s.obs.add(
                "memory-format-mismatch",
                s.attributor.site(callers=True),
                f"convolution input is {lx} but its weight is {lw}: PyTorch converts one of them on every call",
                {
                    "op": "convolution",
                    "shapes": [list(x.shape), list(w.shape)],
                    "strides": [list(x.stride()), list(w.stride())],
                    "formats": [lx, lw],
                },
            )
