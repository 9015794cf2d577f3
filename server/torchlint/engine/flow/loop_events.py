"""Training-loop structure: the ordered events of one loop iteration.

A loop body is flattened into events in source order — backward, optimizer
step, gradient clearing, scheduler step, mode switches — each marked with the
branch path that leads to it (which `if`/`try` arm, which nested loop), so
rules can ask "does A always run before B?" and "can A and B both run?".
The ordering rules of the TL1xx family read these events instead of walking
the loop themselves. Calls to functions defined in the same file are followed
one level deep.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple, Protocol, cast

import libcst as cst

from torchlint.engine.core.callargs import get_arg, is_name, literal, truthy
from torchlint.engine.core.walk import LEAVES, SCOPES, block_statements, iter_nodes, list_children, listed_children
from torchlint.engine.flow.blocks import BranchPath, Loop, Place, headers, statements
from torchlint.engine.flow.no_grad_callers import KEPT, grad_mode
from torchlint.engine.semantic.kinds import CLIP_GRAD, SAME_OBJECT_METHODS, Kind
from torchlint.engine.semantic.names import dotted

if TYPE_CHECKING:
    from torchlint.engine.context import FileContext
    from torchlint.engine.semantic.semantics import Scope


class EventKind(enum.Enum):
    BACKWARD = "backward"
    STEP = "step"  # optimizer step (also scaler.step(opt))
    ZERO_GRAD = "zero_grad"
    SCHED_STEP = "scheduler_step"
    EVAL = "eval"
    TRAIN = "train"
    EMPTY_CACHE = "empty_cache"
    UNSCALE = "unscale"  # scaler.unscale_(opt): gradients back to their true size
    SCALER_UPDATE = "scaler_update"  # scaler.update(): the loss scale for the next step
    CLIP = "clip"  # torch.nn.utils.clip_grad_norm_ / clip_grad_value_


@dataclass(frozen=True)
class Event:
    kind: EventKind
    node: cst.CSTNode  # the call (or assignment) that is the event
    target: cst.BaseExpression | None  # the optimizer / model / loss involved
    depth: int  # 0: directly in this loop; 1+: inside nested loops
    top: cst.BaseStatement  # the statement directly in the loop body holding it
    via: cst.FunctionDef | None = None  # reached through a call to this local function
    # (node, arm) pairs from the loop body down to the event: if-arms, except
    # handlers, nested loop bodies. An event whose path is a prefix of another's
    # runs whenever the other does (within the iteration).
    path: BranchPath = ()
    stmt: cst.BaseStatement | None = None  # the simple statement line holding the event
    alone: bool = False  # `stmt` holds just this call and is the only statement of its block

    @property
    def movable(self) -> cst.BaseStatement | None:
        """The event's statement when a fix may move or delete it (a one-call statement directly in the loop
        body), else None: the statement itself, so a fix that removes it needs no second check."""
        movable = self.via is None and self.stmt is self.top and _single_call(self.top, self.node)
        return self.top if movable else None

    @property
    def every_iteration(self) -> bool:
        """Not behind an `if`/`else`, a `match` case or an `except` on its way from the loop body (through the
        call of a helper too): `if step % N == 0: validate()` runs the helper's events every N steps only."""
        return all(arm == "body" for _, arm in self.path)

    @property
    def in_handler(self) -> bool:
        return any(arm == "except" for _, arm in self.path)


class OnBranch(Protocol):
    """Something placed on a branch path: an Event, or a backward() call of graph_flow."""

    @property
    def path(self) -> BranchPath: ...


def dominates(a: OnBranch, b: OnBranch) -> bool:
    """`a` runs in every iteration in which `b` runs (same or enclosing branch)."""
    return b.path[: len(a.path)] == a.path


def exclusive(a: OnBranch, b: OnBranch) -> bool:
    """`a` and `b` sit in different arms of one `if`/`try`: never both in one pass."""
    arms = dict(a.path)
    return any(node in arms and arms[node] != arm for node, arm in b.path)


# The nodes whose target a helper stores to (their classes have no subclasses: compared by type).
_Storing = cst.AssignTarget | cst.AugAssign | cst.AnnAssign | cst.For | cst.NamedExpr
_STORING: frozenset[type[cst.CSTNode]] = frozenset({*_Storing.__args__, cst.AsName})
_GRAD_CLEARING_METHODS = frozenset({"zero_", "detach_", "fill_", "requires_grad_"})
_TRUTHY_RETAIN = ("retain_graph", "create_graph")


def backward_call(
    call: cst.Call, kind_of: Callable[[cst.BaseExpression], Kind]
) -> tuple[cst.BaseExpression | None, bool] | None:
    """(the tensor back-propagated, retains graph?) if `call` runs a backward pass.

    `loss.backward()`, `torch.autograd.backward(loss)`, `accelerator.backward(loss)`,
    `self.manual_backward(loss)`, `scaler.scale(loss).backward()`; `kind_of(expr)`
    gives the Kind of an expression in the caller's scope.
    """
    func = call.func
    if not isinstance(func, cst.Attribute):
        return None
    method = func.attr.value
    if method not in ("backward", "manual_backward"):
        return None
    retain = any(truthy(get_arg(call, k)) for k in _TRUTHY_RETAIN)
    first = call.args[0].value if call.args and call.args[0].keyword is None and not call.args[0].star else None
    if method == "manual_backward":
        return first, retain
    receiver = func.value
    if dotted(receiver) == "torch.autograd":
        return autograd_backward(call)
    receiver_kind = kind_of(receiver)
    if receiver_kind & (Kind.ACCELERATOR | Kind.MODEL):  # `accelerator.backward(loss)`, a DeepSpeed engine's
        return first, retain
    if first is not None and not receiver_kind & (Kind.TENSOR | Kind.LOSS) and _one_loss_argument(call):
        # `x.backward(y)` with `x` unknown: an engine's backward(loss) or a tensor's backward(gradient);
        # a backward pass runs, but nothing proves which tensor it starts from
        return None, retain
    if not retain:  # Tensor.backward(gradient, retain_graph, create_graph)
        retain = truthy(get_arg(call, "retain_graph", 1)) or truthy(get_arg(call, "create_graph", 2))
    return receiver, retain


def _one_loss_argument(call: cst.Call) -> bool:
    """The arguments could be an engine's `backward(loss)`: one positional argument, not None
    (`Tensor.backward(None, True)` passes the gradient and retain_graph positionally)."""
    positional = [a for a in call.args if a.keyword is None]
    return len(positional) == 1 and not is_name(positional[0].value, "None")


def autograd_backward(call: cst.Call) -> tuple[cst.BaseExpression | None, bool]:
    """(tensors, retains graph?) of `torch.autograd.backward(tensors, grad_tensors, retain_graph, create_graph)`."""
    first = call.args[0].value if call.args else None
    return first, truthy(get_arg(call, "retain_graph", 2)) or truthy(get_arg(call, "create_graph", 3))


def parameter_arguments(
    fn: cst.FunctionDef, call: cst.Call, method: bool
) -> tuple[tuple[str, cst.BaseExpression], ...]:
    """(parameter, argument) pairs of `call` to `fn`, where binding is certain (none after a `*arg`)."""
    positional = [p.name.value for p in (*fn.params.posonly_params, *fn.params.params)][1 if method else 0 :]
    named = {p.name.value for p in (*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params)}
    pairs: list[tuple[str, cst.BaseExpression]] = []
    for i, arg in enumerate(call.args):
        if arg.star:
            break
        if arg.keyword is not None:
            if arg.keyword.value in named:
                pairs.append((arg.keyword.value, arg.value))
        elif i < len(positional):
            pairs.append((positional[i], arg.value))
    return tuple(pairs)


def _single_call(stmt: cst.BaseStatement, call: cst.CSTNode) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and stmt.body[0].value is call
    )


class _Walk(NamedTuple):  # a tuple: `_replace` is made for every statement and block walked
    """Where the walk of one loop body is: what every event found there shares."""

    out: list[Event]
    depth: int
    via: cst.FunctionDef | None
    path: BranchPath
    top: cst.BaseStatement  # the statement of the loop (or function) body being walked
    scope: Scope | None
    # in a helper reached through a call: its parameters -> the arguments of that call, so
    # `evaluate(model)` switching its `net` to eval mode switches `model`
    aliases: tuple[tuple[str, cst.BaseExpression], ...] = ()
    grad_off: bool = False  # inside `with torch.no_grad():` (or a helper called there): a backward cannot run


class LoopAnalysis:
    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self._cache: dict[Loop | cst.FunctionDef, list[Event]] = {}
        self._functions: dict[str, cst.FunctionDef] | None = None
        self._listed: dict[int, tuple[cst.CSTNode, list[cst.CSTNode]]] = {}  # id(node) -> its calls
        self._stored: dict[int, set[str]] = {}  # id(helper) -> the names it assigns
        # (id(call), id(scope)) -> the event it is (kind, target) or the function of this file it runs
        self._classified: dict[
            tuple[int, int], tuple[EventKind | None, cst.BaseExpression | None, cst.FunctionDef | None]
        ] = {}

    def events(self, loop: Loop) -> list[Event]:
        events = self._cache.get(loop)
        if events is None:
            events = self._cache[loop] = []
            body = block_statements(loop.body)
            for stmt in body:
                self._walk_block([stmt], _Walk(events, 0, None, (), stmt, self.ctx.scope), alone=len(body) == 1)
        return events

    def body_events(self, fn: cst.FunctionDef) -> list[Event]:
        """The events of one call of `fn` (the function the traversal is in), read like one loop
        iteration: a step function that an engine or trainer calls once per batch."""
        events = self._cache.get(fn)
        if events is None:
            events = self._cache[fn] = []
            for stmt in block_statements(fn.body):
                self._walk_block([stmt], _Walk(events, 0, None, (), stmt, self.ctx.scope), alone=False)
        return events

    def is_training_loop(self, loop: Loop) -> bool:
        return any(e.kind is EventKind.BACKWARD for e in self.events(loop))

    def builds_its_model(self, loop: Loop) -> bool:
        """Every iteration builds a new model and runs it (`model = Net(cfg).to(device)`, then `model(x)`): each
        iteration is a run of its own (a sweep, a batch-size search), not a step of one model's training. The
        model is what inference knows as one, or what the iteration switches to training mode; a value made
        from a model the loop already has (`torch.compile(model)`, `DDP(model)`) is not new."""
        trained = {dotted(e.target) for e in self.events(loop) if e.kind is EventKind.TRAIN and e.target is not None}
        called = {dotted(n.func) for n in self._calls_in(loop.body) if type(n) is cst.Call}
        for stmt, place in statements(block_statements(loop.body)):
            if place.path or type(stmt) is not cst.SimpleStatementLine:
                continue  # behind a branch or in a nested loop: not every iteration
            for small in stmt.body:
                if not (isinstance(small, cst.Assign) and len(small.targets) == 1):
                    continue
                name, built = dotted(small.targets[0].target), _built(small.value)
                if name is None or name not in called or built is None or self._from_a_model(built, name):
                    continue
                if name in trained or self._infer(built) & Kind.MODEL:
                    return True
        return False

    def _from_a_model(self, call: cst.Call, name: str) -> bool:
        """`call` is handed `name` itself or a value inference knows as a model."""
        return any(dotted(a.value) == name or self._infer(a.value) & (Kind.MODEL | Kind.WRAPPED) for a in call.args)

    def _infer(self, expr: cst.BaseExpression) -> Kind:
        scope = self.ctx.scope
        return self.ctx.semantics.infer(expr, scope) if scope is not None else Kind.NONE

    # -- walking ----------------------------------------------------------
    def _walk_block(self, stmts: Sequence[cst.BaseStatement], w: _Walk, alone: bool | None = None) -> None:
        last: Place | None = None
        here = w
        for stmt, place in statements(stmts, alone=alone):
            if w.aliases and place.path and _ruled_out(place.path, self._constant_parameters(w)):
                continue  # a helper's branch the call's constant arguments never take
            if place is not last:  # the statements of one block share their Place
                last = place
                here = w if not place.path else w._replace(depth=w.depth + len(place.loops), path=w.path + place.path)
                if place.withs:
                    here = here._replace(grad_off=self._grad_off(place.withs, w.grad_off))
            if type(stmt) is cst.SimpleStatementLine:
                single = place.alone and len(stmt.body) == 1
                for small in stmt.body:
                    self._walk_expr(small, here, stmt, single)
            else:
                for header in headers(stmt):
                    self._walk_expr(header, here, None, False)

    def _walk_expr(self, node: cst.CSTNode, w: _Walk, stmt: cst.SimpleStatementLine | None, alone: bool) -> None:
        for n in self._calls_in(node):
            if type(n) is cst.Call:
                self._call_event(n, w, stmt, alone)
            else:
                assign = cast(cst.Assign, n)
                for t in assign.targets:
                    if isinstance(t.target, cst.Attribute) and t.target.attr.value == "grad":
                        if isinstance(assign.value, cst.Name) and assign.value.value == "None":
                            self._add(w, EventKind.ZERO_GRAD, n, t.target.value, stmt, False)

    def _constant_parameters(self, w: _Walk) -> dict[str, cst.BaseExpression]:
        """The helper's parameters bound by the call it was reached through, less those it reassigns."""
        fn = w.via
        if fn is None:
            return {}
        stored = self._stored.get(id(fn))
        if stored is None:
            targets = [  # types compared: isinstance() against libcst's ABCs runs Python code for every miss
                cast(_Storing, n).target if type(n) is not cst.AsName else n.name
                for n in iter_nodes(fn)
                if type(n) in _STORING
            ]
            stored = self._stored[id(fn)] = {
                n.value for t in targets for n in (t, *iter_nodes(t)) if type(n) is cst.Name
            }
        return {p: a for p, a in w.aliases if p not in stored}

    def _grad_off(self, withs: tuple[cst.With, ...], off: bool) -> bool:
        """Whether autograd is off inside `withs` (outermost first), entered with it `off`."""
        for stmt in withs:
            for item in stmt.items:
                mode = grad_mode(item.item, self.ctx.qualname)
                if mode is not KEPT:
                    off = mode is True  # turned on, or set to a value not seen: a backward may run
        return off

    def _calls_in(self, node: cst.CSTNode) -> list[cst.CSTNode]:
        """The calls and assignments of `node` in post-order (`scaler.scale(loss).backward()`: scale() before
        backward()), not into definitions or lambdas; listed once: a nested loop's statements are read for
        every loop around them."""
        known = self._listed.get(id(node))
        if known is not None:
            return known[1]
        found: list[cst.CSTNode] = []
        stack: list[tuple[cst.CSTNode, bool]] = [(node, False)]
        listed = listed_children()  # `children`'s lists, read directly
        while stack:
            n, done = stack.pop()
            if done:
                found.append(n)
                continue
            node_type = type(n)  # compared by type: isinstance() against libcst's ABCs is slow per node
            if node_type in SCOPES or node_type in LEAVES:
                continue
            if node_type is cst.Call or node_type is cst.Assign:  # the only nodes read after their children
                stack.append((n, True))
            known = listed.get(id(n))
            stack.extend([(c, False) for c in reversed(known[1] if known is not None else list_children(n))])
        self._listed[id(node)] = (node, found)
        return found

    def _add(
        self,
        w: _Walk,
        kind: EventKind,
        node: cst.CSTNode,
        target: cst.BaseExpression | None,
        stmt: cst.SimpleStatementLine | None,
        alone: bool,
    ) -> None:
        if kind is EventKind.BACKWARD and w.grad_off:
            return  # with autograd off a backward raises, or a `requires_grad` test skips it: it trains nothing
        if type(target) is cst.Name:
            target = next((arg for param, arg in w.aliases if param == target.value), target)
        w.out.append(Event(kind, node, target, w.depth, w.top, w.via, w.path, stmt, alone))

    def _kind(self, expr: cst.BaseExpression, w: _Walk) -> Kind:
        return self.ctx.semantics.infer(expr, w.scope) if w.scope is not None else Kind.NONE

    def _call_event(self, call: cst.Call, w: _Walk, stmt: cst.SimpleStatementLine | None, alone: bool) -> None:
        key = (id(call), id(w.scope))  # what a call does depends on it and the scope it is read in only
        found = self._classified.get(key)
        if found is None:
            found = self._classified[key] = self._classify(call, w)
        kind, target, function = found
        if kind is not None:
            self._add(w, kind, call, target, stmt, alone)
            return
        # one level into functions defined in this file
        if function is not None and w.via is None:  # each call: `reset_grad()` may run twice an iteration
            bound = isinstance(call.func, cst.Attribute)  # `self.helper(...)`: `self` takes the first parameter
            inner = w._replace(
                via=function, scope=self._scope_of(function), aliases=parameter_arguments(function, call, bound)
            )
            self._walk_block(block_statements(function.body), inner, alone=False)

    def _classify(
        self, call: cst.Call, w: _Walk
    ) -> tuple[EventKind | None, cst.BaseExpression | None, cst.FunctionDef | None]:
        """The event a call is (its kind and target), or the function of this file it runs, or neither."""
        func = call.func
        qualname = self.ctx.qualname(func)
        if qualname == "torch.autograd.backward":
            tensors, _ = autograd_backward(call)
            return EventKind.BACKWARD, tensors, None
        if qualname == "torch.cuda.empty_cache":
            return EventKind.EMPTY_CACHE, None, None
        if qualname in CLIP_GRAD:
            return EventKind.CLIP, call.args[0].value if call.args else None, None
        if isinstance(func, cst.Attribute):
            method, receiver = func.attr.value, func.value
            backward = backward_call(call, lambda e: self._kind(e, w))
            if backward is not None:
                return EventKind.BACKWARD, backward[0], None
            if method == "zero_grad":
                return EventKind.ZERO_GRAD, receiver, None
            if (
                method in _GRAD_CLEARING_METHODS
                and isinstance(receiver, cst.Attribute)
                and (
                    receiver.attr.value == "grad"
                    or isinstance(receiver.value, cst.Attribute)
                    and receiver.value.attr.value == "grad"
                )
            ):
                return EventKind.ZERO_GRAD, receiver, None
            if method in ("unscale_", "update") and self._kind(receiver, w) & Kind.SCALER:
                if method == "update":
                    return EventKind.SCALER_UPDATE, receiver, None
                return EventKind.UNSCALE, call.args[0].value if call.args else None, None
            if method == "step":
                kind = self._kind(receiver, w)
                if kind & Kind.SCALER:
                    return EventKind.STEP, call.args[0].value if call.args else receiver, None
                if kind & Kind.SCHEDULER:
                    return EventKind.SCHED_STEP, receiver, None
                if kind & Kind.OPTIMIZER:
                    return EventKind.STEP, receiver, None
                return None, None, None
            if method in ("eval", "train"):
                if self._kind(receiver, w) & Kind.MODEL:
                    # train(False) is eval(); train(mode) with an unknown mode counts as a restore
                    off = method == "eval" or bool(call.args) and is_name(call.args[0].value, "False")
                    if method == "train" or not call.args:
                        return EventKind.EVAL if off else EventKind.TRAIN, receiver, None
                return None, None, None
        return None, None, self._local_function(func)

    def _local_function(self, func: cst.BaseExpression) -> cst.FunctionDef | None:
        if self._functions is None:
            self._functions = self.ctx.local_functions()
        name = dotted(func)
        if name is None:
            return None
        if name.startswith("self.") and name.count(".") == 1:
            name = name[5:]
        return self._functions.get(name)

    def _scope_of(self, fn: cst.FunctionDef) -> Scope:
        """The semantic scope of a same-file function, built with its true parents (the functions and
        classes around it, as the scope analysis nests them: the kind questions of the walk read it anyway,
        where the call index would be built for this alone)."""
        return self.ctx.semantics.scope_at(fn)


def _built(value: cst.BaseExpression) -> cst.Call | None:
    """The call that made `value`, under the methods that return their receiver (`Net().to(device)`): one that
    is not a method of a value (`Net(cfg)`, `models.resnet18()`, not `model.to(device)` alone)."""
    while (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Attribute)
        and value.func.attr.value in SAME_OBJECT_METHODS
    ):
        value = value.func.value
    return value if isinstance(value, cst.Call) and dotted(value.func) is not None else None


def _ruled_out(path: BranchPath, bound: dict[str, cst.BaseExpression]) -> bool:
    """An `if` arm on `path` that the constants a call binds to the helper's parameters decide against:
    `if mode == "train": loss.backward()` in `run_epoch(..., mode="eval")`."""
    for node, arm in path:
        if isinstance(node, cst.If) and arm in ("if", "else"):
            holds = _test(node.test, bound)
            if holds is not None and holds != (arm == "if"):
                return True
    return False


def _test(expr: cst.BaseExpression, bound: dict[str, cst.BaseExpression]) -> bool | None:
    """The truth of an `if` test made of `==` / `!=` between a bound parameter and a constant, `and`, `or`,
    `not` (None: not decided by the call's constants)."""
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
        inner = _test(expr.expression, bound)
        return None if inner is None else not inner
    if isinstance(expr, cst.BooleanOperation):
        left, right = _test(expr.left, bound), _test(expr.right, bound)
        if isinstance(expr.operator, cst.And):
            return False if False in (left, right) else None if None in (left, right) else True
        return True if True in (left, right) else None if None in (left, right) else False
    if isinstance(expr, cst.Comparison) and len(expr.comparisons) == 1:
        target = expr.comparisons[0]
        op = target.operator
        if not isinstance(op, (cst.Equal, cst.NotEqual)):
            return None
        a, b = (
            literal(bound.get(e.value, e) if isinstance(e, cst.Name) else e) for e in (expr.left, target.comparator)
        )
        if a is ... or b is ...:
            return None
        return (a == b) is isinstance(op, cst.Equal)
    return None
