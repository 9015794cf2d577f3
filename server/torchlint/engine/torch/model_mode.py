"""Train or eval mode: which models behave differently in each, and where a model is proven in training mode.

`model.eval()` matters only for layers that read `self.training`: dropout, batch
norm (batch statistics, running-stat updates), recurrent and transformer dropout,
a project layer whose code reads `self.training`, and the torchvision classifiers
built of them. `mode_dependent` answers for the module a call builds — a torch
layer, an `nn.Sequential` of them, a class of this file or of another project file
(through its `ast` summary, bases included), a torchvision factory — and says no
when it cannot see (a `timm`/`transformers` model, a helper's result). A rate
that `__init__` takes as a parameter (`nn.Dropout(dropout)`) is the constant the
instantiation binds it to (`Attn(d, dropout=0.0)`, or the default when not
given), through project classes that build others; any other rate may drop.

`in_training_mode` decides whether a model is in training mode at a point of a
function from evidence in that function only: built there by a constructor (modules
start in training mode, unless building one runs code that may switch it: lpips'
`PerceptualLoss()` puts its network in eval mode), or switched by `.train()` and then trained (a backward
pass) before the point, with nothing that may switch it to eval mode reaching the
point — `.eval()`, `.train(flag)`, `.apply(fn)`, or a call that receives the model
and whose code (this file's or a project file's) switches it or cannot be read: read from that code's
tree, through the helpers it hands the model on to (mode_effects.py), never from its text.
`evaluation_parameters` names the parameters a function runs under `no_grad` /
`inference_mode` without switching or training them: a validation helper whose
callers decide the mode.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import libcst as cst

from torchlint.engine.core.callargs import get_arg
from torchlint.engine.core.callargs import literal as literal_value
from torchlint.engine.core.walk import iter_nodes
from torchlint.engine.semantic.inference import symbol
from torchlint.engine.semantic.kinds import NO_GRAD, SAME_OBJECT_METHODS, Kind
from torchlint.engine.semantic.names import dotted
from torchlint.engine.semantic.project import ModuleSummary, Project, qualify
from torchlint.engine.semantic.values import Where
from torchlint.engine.torch.mode_effects import Mode, Slot, effects, mode

if TYPE_CHECKING:
    from torchlint.engine.context import FileContext

_DROPOUT = frozenset(
    f"torch.nn.{n}" for n in ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout")
)
_BATCH_NORM = frozenset(f"torch.nn.{p}BatchNorm{d}" for p in ("", "Lazy") for d in ("1d", "2d", "3d")) | {
    "torch.nn.SyncBatchNorm"
}
_INSTANCE_NORM = frozenset(f"torch.nn.{p}InstanceNorm{d}" for p in ("", "Lazy") for d in ("1d", "2d", "3d"))
_RECURRENT = frozenset({"torch.nn.RNN", "torch.nn.LSTM", "torch.nn.GRU", "torch.nn.MultiheadAttention"})  # dropout=0
_TRANSFORMER = frozenset(
    {"torch.nn.Transformer", "torch.nn.TransformerEncoderLayer", "torch.nn.TransformerDecoderLayer"}
)  # dropout=0.1 by default
# torchvision factories whose models have no mode-dependent layer by default (dropout 0.0, LayerNorm)
_TORCHVISION_MODE_FREE = ("vit_", "get_")
_DEPTH = 8
Bindings = dict[str, object]  # parameter name -> the constant it holds for one instance being built
_NEUTRAL_BUILTINS = frozenset({"print", "len", "isinstance", "type", "id", "repr", "str", "hasattr", "getattr", "sum"})


# -- which modules depend on the mode ------------------------------------------------------
def mode_dependent(ctx: FileContext, built: cst.Call) -> bool:
    """The module `built` builds has a layer that behaves differently in training and eval mode."""
    return _LayerFinder(ctx.project).built(ctx, built, 0)


def mode_free(ctx: FileContext, built: cst.Call) -> bool:
    """The module `built` builds is proven to behave the same in both modes: torch.nn layers or classes of
    this project whose layers are all known, none of them dropout, batch-norm or `self.training`-dependent.
    A library model (timm, transformers) is not known, so it is not proven mode-free."""
    q = ctx.qualname(built.func)
    local = isinstance(built.func, cst.Name) and built.func.value in ctx.semantics.classes.by_name
    known = local or (q is not None and (q.startswith("torch.nn.") or _project_class(ctx, built.func)))
    return known and not mode_dependent(ctx, built)


def _project_class(ctx: FileContext, func: cst.BaseExpression) -> bool:
    found = ctx.semantics.definition(func)
    return found is not None and found[1] in found[0].class_defs


def _layer(q: str, literal: Callable[[str, int | None], object]) -> bool | None:
    """Whether the torch layer or torchvision factory `q` builds a mode-dependent module (`literal`: the constant
    passed for a parameter, as `_literal` reads it); None: `q` is none of these."""
    if q in _DROPOUT:
        return literal("p", 0) != 0
    if q in _BATCH_NORM:
        return True
    if q in _INSTANCE_NORM:
        return literal("track_running_stats", 4) is True
    if q in _RECURRENT:
        p = literal("dropout", None)
        return isinstance(p, (int, float)) and p > 0
    if q in _TRANSFORMER:
        return literal("dropout", None) != 0
    head, _, last = q.rpartition(".")
    if head.startswith("torchvision.models") and last[:1].islower():
        return not last.startswith(_TORCHVISION_MODE_FREE)
    return None


class _LayerFinder:
    """Layers of what a call builds: the call in the linted file's tree (`built`), the classes and calls of any
    project file in its `ast` summary (`call`, `cls`), each class resolved by inference.symbol."""

    def __init__(self, project: Project | None) -> None:
        self.project = project
        self.seen: set[tuple[Path, str, tuple[tuple[str, object], ...]]] = set()

    def built(self, ctx: FileContext, call: cst.Call, depth: int) -> bool:
        if depth > _DEPTH:
            return False
        q = ctx.qualname(call.func)
        verdict = _layer(q, lambda keyword, index: _cst_literal(call, keyword, index)) if q is not None else None
        if verdict is not None:
            return verdict
        found = ctx.semantics.definition(call.func)
        if found is not None and found[1] in found[0].class_defs:
            passed = [(slot, literal_value(a.value)) for slot, a in _slots(call)]
            return self.cls(found[0], found[1], depth + 1, _bindings(found[0].class_defs[found[1]], passed))
        if dotted(call.func) is None:
            return False
        # containers: nn.Sequential(nn.Linear(...), nn.Dropout(0.1)), nn.ModuleList([...])
        inner = [n for a in call.args for n in (a.value, *iter_nodes(a.value)) if isinstance(n, cst.Call)]
        return any(self.built(ctx, c, depth + 1) for c in inner)

    def call(self, summary: ModuleSummary, call: ast.Call, depth: int, bound: Bindings) -> bool:
        """`bound`: the constants the names of `call`'s arguments hold (the parameters of the `__init__` it is in)."""
        q = qualify(summary, call.func)
        if q is None or depth > _DEPTH:
            return False
        verdict = _layer(q, lambda keyword, index: _literal(call, keyword, index, bound))
        if verdict is not None:
            return verdict
        found = project_class(self.project, summary, q)
        if found is not None:
            passed = _ast_slots(call, bound)
            return self.cls(found[0], found[1], depth + 1, _bindings(found[0].class_defs[found[1]], passed))
        # containers: nn.Sequential(nn.Linear(...), nn.Dropout(0.1)), nn.ModuleList([...])
        inner = _calls_in([*call.args, *(k.value for k in call.keywords)])
        return any(self.call(summary, c, depth + 1, bound) for c in inner)

    def cls(self, summary: ModuleSummary, name: str, depth: int, bound: Bindings) -> bool:
        """`bound`: the constants its `__init__`'s parameters hold for this instance (see `_bindings`)."""
        key = (summary.path, name, tuple(sorted(bound.items())))
        if key in self.seen or depth > _DEPTH:
            return False
        self.seen.add(key)
        node = summary.class_defs[name]
        direct = _init_calls(node) if bound else set()
        for n in ast.walk(node):
            if isinstance(n, ast.Attribute) and n.attr == "training" and _is_self(n.value):
                return True  # its own code behaves differently by mode
            if isinstance(n, ast.Call) and self.call(summary, n, depth + 1, bound if id(n) in direct else {}):
                return True
        for base in summary.classes.get(name, []):
            q = qualify(summary, base)
            found = project_class(self.project, summary, q) if q is not None else None
            if found is not None and self.cls(found[0], found[1], depth + 1, {}):  # `super().__init__(...)`: unread
                return True
        return False


def project_class(project: Project | None, summary: ModuleSummary, q: str) -> tuple[ModuleSummary, str] | None:
    """The class `q` names: one of `summary`'s own, or a project file's."""
    found = symbol(project, summary, q)
    return found if found is not None and found[1] in found[0].class_defs else None


def _cst_literal(call: cst.Call, keyword: str, index: int | None) -> object:
    """`_literal` for a call of the linted file's tree."""
    arg = get_arg(call, keyword, index)
    if arg is None:
        return None
    return literal_value(arg.value)


def _calls_in(exprs: list[ast.expr]) -> list[ast.Call]:
    return [n for e in exprs for n in ast.walk(e) if isinstance(n, ast.Call)]


def _literal(call: ast.Call, keyword: str, index: int | None, bound: Bindings) -> object:
    """The constant passed for a parameter (None: not given; ... when not a constant): a literal, or a name
    `bound` gives a constant."""
    value: ast.expr | None = next((k.value for k in call.keywords if k.arg == keyword), None)
    if (
        value is None
        and index is not None
        and len(call.args) > index
        and not any(isinstance(a, ast.Starred) for a in call.args[: index + 1])
    ):
        value = call.args[index]
    if value is None:
        return None
    return _constant(value, bound)


def _constant(value: ast.expr, bound: Bindings) -> object:
    """The constant `value` is (... when unknown): a literal, or a name `bound` gives one."""
    if isinstance(value, ast.Constant):
        return value.value
    return bound.get(value.id, ...) if isinstance(value, ast.Name) else ...


def _ast_slots(call: ast.Call, bound: Bindings) -> list[tuple[Slot, object]]:
    """Each argument of `call` with where it goes (None: after `*args`, or `**kwargs`) and its constant."""
    out: list[tuple[Slot, object]] = []
    unpacked = False
    for i, a in enumerate(call.args):
        unpacked = unpacked or isinstance(a, ast.Starred)
        out.append((None if unpacked else i, _constant(a, bound)))
    out += [(k.arg, _constant(k.value, bound)) for k in call.keywords]
    return out


def _bindings(cls: ast.ClassDef, passed: list[tuple[Slot, object]]) -> Bindings:
    """The constants the parameters of `cls.__init__` hold when it is built with `passed` (each argument's slot
    and constant, ... when not one): the arguments given, the defaults of those not given. Only parameters
    `__init__` never reassigns; nothing when an argument's slot is unknown (`*args` / `**kwargs`) or the class
    has no `__init__` of its own."""
    init = next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
    if init is None or any(slot is None for slot, _ in passed):
        return {}
    args = init.args
    positional = [a.arg for a in [*args.posonlyargs, *args.args]][1:]  # after `self`
    values: dict[str, object] = dict(zip(positional[len(positional) - len(args.defaults) :], args.defaults))
    values |= {a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None}
    found = {n: _constant(v, {}) for n, v in values.items() if isinstance(v, ast.expr)}
    for slot, value in passed:
        name = positional[slot] if isinstance(slot, int) and slot < len(positional) else slot
        if isinstance(name, str):
            found[name] = value
    stored = {n.id for n in ast.walk(init) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    params = {*positional, *(a.arg for a in args.kwonlyargs)}
    return {n: v for n, v in found.items() if n in params and n not in stored and v is not ...}


def _init_calls(cls: ast.ClassDef) -> set[int]:
    """The calls of `cls.__init__`'s own body (not of functions or lambdas defined in it, whose names are theirs)."""
    init = next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
    out: set[int] = set()
    todo: list[ast.AST] = list(init.body) if init is not None else []
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(n, ast.Call):
            out.add(id(n))
        todo.extend(ast.iter_child_nodes(n))
    return out


def _is_self(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Name) and expr.id == "self"


# -- validation helpers ---------------------------------------------------------------------
def evaluation_parameters(ctx: FileContext, func: cst.BaseExpression) -> list[tuple[int, str]]:
    """(position, name) of the parameters the plain function `func` calls run under `no_grad` /
    `inference_mode`, without a backward pass, a switch of their mode, or handing them to other calls."""
    found = _function(ctx, func)
    if found is None or effects(*found).backward:
        return []
    summary, fn = found
    params = [a.arg for a in [*fn.args.posonlyargs, *fn.args.args]]
    decorated = any(_is_no_grad(summary, d) for d in fn.decorator_list)
    blocks: list[ast.AST] = (
        [fn]
        if decorated
        else [
            w
            for w in ast.walk(fn)
            if isinstance(w, ast.With) and any(_is_no_grad(summary, i.context_expr) for i in w.items)
        ]
    )
    run = {
        c.func.id if isinstance(c.func, ast.Name) else _name(c.func.value)
        for b in blocks
        for c in ast.walk(b)
        if isinstance(c, ast.Call)
        and (isinstance(c.func, ast.Name) or (isinstance(c.func, ast.Attribute) and c.func.attr == "forward"))
    }
    out = []
    for i, p in enumerate(params):
        if p in run and not _rebound_or_passed(fn, p) and mode(ctx.project, summary, fn, frozenset({p})) == Mode():
            out.append((i, p))
    return out


class EvaluationHelpers:
    """How this file may call a function that runs something under `no_grad` / `inference_mode`: the names of
    its own such functions and the qualified names of the project's it imports (an imported function, or a
    function of an imported module). Asked name by name (`name in helpers`), each answered once: only the
    modules a call goes through are read, not every module the file imports."""

    def __init__(self, ctx: FileContext) -> None:
        self._ctx = ctx
        self._known: dict[str, bool] = {}
        self._resolved: dict[str, tuple[ModuleSummary, str] | None] = {}
        self._imported_names: set[str] | None = None
        # a function of this file can guard only if the text names a guard: searched once, not per name asked
        self._may_guard = "no_grad" in ctx.text or "inference_mode" in ctx.text

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        known = self._known.get(name)
        if known is None:
            known = self._known[name] = self._own(name) or self._imported(name)
        return known

    def _own(self, name: str) -> bool:
        if not self._may_guard:
            return False
        fn = self._ctx.semantics.inference.summary.functions.get(name)
        return fn is not None and _names_a_guard(fn)

    def _imported(self, name: str) -> bool:
        ctx = self._ctx
        project, folder = ctx.project, ctx.semantics.folder
        if project is None or folder is None:
            return False
        if self._imported_names is None:
            self._imported_names = set(ctx.imports.table.values())
        imported = self._imported_names
        if name in imported:  # an imported function
            target = self._resolve(project, name, folder)
            if (
                target is not None
                and target[1] in target[0].functions
                and _guards(target[0], target[0].functions[target[1]])
            ):
                return True
        module, _, function = name.rpartition(".")
        if not module or module not in imported:
            return False
        target = self._resolve(project, module, folder)
        if target is not None and target[1] in target[0].functions:
            return False  # the name imported is a function, not a module
        path = project.find_module(module, folder)
        summary = project.summary(path) if path is not None else None
        return summary is not None and function in summary.functions and _guards(summary, summary.functions[function])

    def _resolve(self, project: Project, q: str, folder: Path) -> tuple[ModuleSummary, str] | None:
        if q not in self._resolved:
            self._resolved[q] = project.resolve(q, folder)
        return self._resolved[q]


_GUARDS = frozenset({"no_grad", "inference_mode"})


def _guards(summary: ModuleSummary, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """`fn` (decorators included) names `no_grad` or `inference_mode` (read from its tree: slicing the
    file's text per function split the whole file into lines every time)."""
    if "no_grad" not in summary.text and "inference_mode" not in summary.text:
        return False
    return _names_a_guard(fn)


def _names_a_guard(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(
        (isinstance(n, ast.Attribute) and n.attr in _GUARDS) or (isinstance(n, ast.Name) and n.id in _GUARDS)
        for n in ast.walk(fn)
    )


def _function(ctx: FileContext, func: cst.BaseExpression) -> tuple[ModuleSummary, ast.FunctionDef] | None:
    """A plain function of this file (top level) or of another project file, as an `ast` summary."""
    found = ctx.semantics.function_definition(func)
    return (found[0], found[1]) if found is not None and isinstance(found[1], ast.FunctionDef) else None


def _is_no_grad(summary: ModuleSummary, expr: ast.expr) -> bool:
    return qualify(summary, expr.func if isinstance(expr, ast.Call) else expr) in NO_GRAD


def _name(expr: ast.expr) -> str | None:
    return expr.id if isinstance(expr, ast.Name) else None


def _rebound_or_passed(fn: ast.FunctionDef, param: str) -> bool:
    """`param` is assigned, or given to another call (which may switch its mode)."""
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and n.id == param and isinstance(n.ctx, ast.Store):
            return True
        if isinstance(n, ast.Call) and any(isinstance(a, ast.Name) and a.id == param for a in n.args):
            return True
        if isinstance(n, ast.Call) and any(isinstance(k.value, ast.Name) and k.value.id == param for k in n.keywords):
            return True
    return False


# -- the mode at a point ----------------------------------------------------------------------
def in_training_mode(ctx: FileContext, model: cst.BaseExpression, point: cst.CSTNode, where: Where) -> bool:
    """`model` is proven in training mode at `point` of the current function (or module level)."""
    name = dotted(model)
    owner: cst.CSTNode = ctx.current_function or ctx.module
    if name is None:
        return False
    nodes = list(iter_nodes(owner, into_functions=False))
    order = {id(n): i for i, n in enumerate(nodes)}
    at = order.get(id(point))
    if at is None:
        return False
    inside = {id(n) for n in iter_nodes(point)}
    looping = {
        id(n)
        for loop in nodes
        if isinstance(loop, (cst.For, cst.While)) and id(point) in _ids(loop)
        for n in iter_nodes(loop)
    }
    trained = switched_on = False
    for n in nodes:
        if not isinstance(n, cst.Call):
            continue
        index = order[id(n)]
        if index > at and id(n) not in looping and id(n) not in inside:
            continue  # after the point, and no loop brings it back
        effect = _effect(ctx, n, name)
        if effect == "eval":
            return False
        if effect == "train" and index < at:
            switched_on = True
        if effect in ("backward", "train-and-backward"):
            trained = True
            switched_on = switched_on or effect == "train-and-backward"
    return (switched_on and trained) or _constructed_here(ctx, model, where)


def _ids(node: cst.CSTNode) -> set[int]:
    return {id(n) for n in iter_nodes(node)}


def _related(receiver: str | None, name: str) -> bool:
    """The same module, a submodule of it, or a module holding it (`model.module.eval()`)."""
    if receiver is None:
        return False
    return receiver == name or receiver.startswith(name + ".") or name.startswith(receiver + ".")


def _effect(ctx: FileContext, call: cst.Call, name: str) -> str | None:
    """What `call` may do to the mode of module `name`: "eval", "train", "backward", "train-and-backward"."""
    func = call.func
    if isinstance(func, cst.Attribute):
        method, receiver = func.attr.value, dotted(func.value)
        if method in ("backward", "manual_backward"):
            return "backward"
        if method == "apply" and _related(receiver, name) and len(call.args) == 1:
            return _callee_effect(ctx, call.args[0].value, [0], applied=True)  # `model.apply(init_weights)`
        if method in ("eval", "train", "apply"):
            on = not call.args or (method == "train" and _is_true(call.args[0].value))
            if _related(receiver, name):
                return "train" if method == "train" and on else "eval"
            other = receiver is not None and ctx.kind(func.value) & Kind.MODEL
            return "eval" if method != "train" and not other else None  # `m.eval()` of `model.modules()`
    slots = [slot for slot, a in _slots(call) if _related(dotted(a.value), name)]
    if not slots:
        return None
    return _callee_effect(ctx, func, slots)


def _slots(call: cst.Call) -> list[tuple[Slot, cst.Arg]]:
    """Each argument of `call` with where it goes: a position, a keyword, None after `*args` / at `**kwargs`."""
    out: list[tuple[Slot, cst.Arg]] = []
    unpacked = False
    for i, a in enumerate(call.args):
        unpacked = unpacked or a.star != ""
        out.append((a.keyword.value if a.keyword is not None else None if unpacked else i, a))
    return out


def _callee_effect(ctx: FileContext, func: cst.BaseExpression, slots: list[Slot], applied: bool = False) -> str | None:
    """What a function that receives the model at `slots` (or, `applied`, each of its submodules) does to its
    mode, as its tree and the project functions it hands the model to show (mode_effects.py)."""
    q = ctx.qualname(func) or ""
    if (q.startswith("torch.") and not applied) or ctx.builtin(func) in _NEUTRAL_BUILTINS:
        return None
    found = _function(ctx, func)
    if found is None:
        return "eval"  # unknown code receives the model: it may switch it
    done = mode(ctx.project, *found, effects(*found).parameters(slots))
    if done.off:
        return "eval"
    if done.on:
        return "train-and-backward" if done.backward else "train"
    return "backward" if done.backward else None


def _is_true(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "True"


def _constructed_here(ctx: FileContext, model: cst.BaseExpression, where: Where) -> bool:
    """`model` holds a module this function (or module level) builds, by a constructor and no mode switch."""
    vals = ctx.values
    expr: cst.BaseExpression = model
    place = where
    for _ in range(16):
        if isinstance(expr, cst.Call):
            func = expr.func
            if isinstance(func, cst.Attribute) and func.attr.value in SAME_OBJECT_METHODS:
                if func.attr.value in ("eval", "train"):
                    return False
                expr = func.value
                continue
            if ctx.qualname(func) in (
                "torch.nn.parallel.DistributedDataParallel",
                "torch.nn.DataParallel",
                "torch.compile",
            ):
                if not expr.args:
                    return False
                expr = expr.args[0].value
                continue
            return place.function is where.function and _constructor(ctx, expr)
        found = vals.value_of(expr, place)
        if found is None:
            return False
        expr, place = found
    return False


def _constructor(ctx: FileContext, call: cst.Call) -> bool:
    """A module class's constructor or a torchvision model factory: the module starts in training mode."""
    q = ctx.qualname(call.func)
    if q is not None:
        head, _, last = q.rpartition(".")
        if head.startswith("torchvision.models") and last[:1].islower():
            return True
        if head in ("torch.nn", "torch.nn.modules") and last[:1].isupper():
            return True
    found = ctx.semantics.definition(call.func)
    if found is None or found[1] not in found[0].class_defs:
        return False
    if ctx.scope is None or not ctx.semantics.infer(call, ctx.scope) & Kind.MODEL:
        return False
    return not _ConstructionSwitches(ctx.project).cls(*found, 0)


class _ConstructionSwitches:
    """Does building a project class run code that may switch modes: `__init__` and the methods it calls,
    on itself (`self.setup()`) or on objects it builds (`self.model = DistModel(); self.model.initialize()`,
    where lpips calls `self.net.eval()`)? Then the new module is not proven in training mode."""

    def __init__(self, project: Project | None) -> None:
        self.project = project
        self.seen: set[tuple[Path, str, str]] = set()

    def cls(self, summary: ModuleSummary, name: str, depth: int) -> bool:
        return self.method(summary, name, "__init__", depth)

    def method(self, summary: ModuleSummary, name: str, method: str, depth: int) -> bool:
        key = (summary.path, name, method)
        if key in self.seen or depth > _DEPTH:
            return False
        self.seen.add(key)
        fn = next(
            (f for f in summary.class_defs[name].body if isinstance(f, ast.FunctionDef) and f.name == method), None
        )
        if fn is None:
            return False
        if any(s.method == "eval" or (s.method == "train" and not s.to_train) for s in effects(summary, fn).switches):
            return True  # not `.apply(init_weights)`: initialising weights switches no mode
        built: dict[str, tuple[ModuleSummary, str]] = {}  # self.attr -> the project class it holds
        for n in ast.walk(fn):
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call):
                q = qualify(summary, n.value.func)
                found = project_class(self.project, summary, q) if q is not None else None
                for t in n.targets:
                    if found is not None and isinstance(t, ast.Attribute) and _is_self(t.value):
                        built[t.attr] = found
                        if self.cls(*found, depth + 1):
                            return True
        for n in ast.walk(fn):
            if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)):
                continue
            owner = n.func.value
            if _is_self(owner) and self.method(summary, name, n.func.attr, depth + 1):
                return True
            held = built.get(owner.attr) if isinstance(owner, ast.Attribute) and _is_self(owner.value) else None
            if held is not None and self.method(*held, n.func.attr, depth + 1):
                return True
        return False
