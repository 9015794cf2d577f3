"""How values live across the iterations of a training loop.

Two questions that neither the event list (loop_events) nor the def-use facts
(graph_flow) answer alone: which value a module call hands to its own next call
(a recurrent state carried from one iteration into the next, through the graph
of the previous step), and which values an iteration computes but reads only
every N-th iteration (under `if step % N == 0`). Both read one function body
(graph_flow.Body); anything they cannot follow answers "not carried" / "read
every step", which keeps the rules asking them silent.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass

import libcst as cst

from torchlint.engine.core.walk import block_statements, children, iter_nodes
from torchlint.engine.flow.blocks import Loop
from torchlint.engine.flow.graph_flow import Backward, Body, Def, names_read
from torchlint.engine.semantic.kinds import GRAPH_CUTTING_METHODS, Kind
from torchlint.engine.semantic.names import dotted, target_names
from torchlint.engine.semantic.values import current_where, instantiated_class

# Calls whose result is a host value: the device copy ends there.
_HOST_METHODS = frozenset({"cpu", "item", "tolist", "numpy"})
_HOST_BUILTINS = frozenset({"float", "int", "bool", "len", "str", "round"})
# What a module's `forward` may cut a state's history with.
_CUTS = GRAPH_CUTTING_METHODS | {"detach_", "data", "no_grad", "inference_mode"}
# Blocks nested in a compound statement (not its header expressions).
_BLOCKS = (cst.BaseSuite, cst.Else, cst.ExceptHandler, cst.ExceptStarHandler, cst.Finally, cst.MatchCase, cst.If)


@dataclass(frozen=True)
class CarriedState:
    """`out, hidden = rnn(x, hidden)`: `names` go into `call` and come back out of it, and `loops` (innermost
    first) hand what one iteration's call returned to the next iteration's call untouched."""

    call: cst.Call
    arg: cst.BaseExpression  # the argument passing the state: `hidden` or `(h, c)`
    names: tuple[str, ...]
    stmt: cst.BaseStatement  # the statement line rebinding the state from the call's result
    loops: tuple[Loop, ...]


def carried_state(body: Body, assign: cst.Assign) -> CarriedState | None:
    """The state a forward pass (`assign`'s value, with autograd on) takes and rebinds, if some loop of `body`
    carries it to the next iteration: the rebinding is its only binding in the loop, and no other call there
    gets it (a helper may detach it) nor an in-place method runs on it (`hidden.detach_()`)."""
    passed = state_argument(assign)
    if passed is None:
        return None
    call, arg, names = passed
    forward = next((f for f in body.forwards if f[0] is call), None)
    if forward is None or forward[3]:
        return None
    index = forward[1]
    stmt = next((d.stmt for d in body.defs.get(names[0], ()) if d.index == index), None)
    if stmt is None:
        return None
    loops = tuple(loop for loop in reversed(body.loop_of.get(stmt, ())) if _untouched(body, loop, names, stmt, call))
    return CarriedState(call, arg, names, stmt, loops) if loops else None


def state_argument(assign: cst.Assign) -> tuple[cst.Call, cst.BaseExpression, tuple[str, ...]] | None:
    """(call, argument, names) when `assign` calls something with names it rebinds from the result
    (`out, hidden = f(x, hidden)`); a syntactic test, cheap to make before any analysis."""
    call = assign.value
    if not isinstance(call, cst.Call):
        return None
    targets = {n for t in assign.targets for n in target_names(t.target)}
    for arg in call.args:
        names = _state_names(arg.value)
        if names and all(n in targets for n in names):
            return call, arg.value, names
    return None


def backward_through(body: Body, stmt: cst.BaseStatement, loop: Loop) -> Backward | None:
    """A backward() in `loop` whose tensor is built from what `stmt` assigns (in the same iteration)."""
    for b in body.backwards:
        if loop in b.loops and b.target is not None and any(d.stmt is stmt for d in sources(body, b.target, b.index)):
            return b
    return None


def cut_by_forward(body: Body, call: cst.Call) -> bool:
    """The module `call` runs is a class of this project (this file's or another's) whose `forward` cuts
    history somewhere (`.detach()`, `.data`, `no_grad`): the state it hands back may carry no graph."""
    ctx = body.ctx
    built = ctx.values.builder(call.func, current_where(ctx))
    found = instantiated_class(ctx, built[0]) if built is not None else None
    if found is None:
        return False
    cls = found[0].class_defs[found[1]]
    forward = next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "forward"), cls)
    return any(
        isinstance(n, ast.Attribute) and n.attr in _CUTS or isinstance(n, ast.Name) and n.id == "no_grad"
        for n in ast.walk(forward)
    )


def sources(body: Body, expr: cst.BaseExpression, index: int) -> set[Def]:
    """Every assignment the value of `expr` (at statement `index`) is built from, transitively, tuple
    unpacking included; not through `.detach()`, `.item()` and the other graph cuts."""
    out: set[Def] = set()
    todo = [(expr, index)]
    while todo:
        e, i = todo.pop()
        for name in names_read(e):
            d = body.reaching(name, i)
            if d is None or d in out:
                continue
            out.add(d)
            value = assigned_value(d)
            if value is not None:
                todo.append((value, d.index))
    return out


def assigned_value(d: Def) -> cst.BaseExpression | None:
    """What `d` assigns from: its value, or for a name unpacked from a tuple (`out, h = rnn(x, h)`) the whole
    right-hand side."""
    if d.value is not None:
        return d.value
    if isinstance(d.stmt, cst.SimpleStatementLine):
        for small in d.stmt.body:
            if isinstance(small, cst.Assign) and any(d.name in target_names(t.target) for t in small.targets):
                return small.value
    return None


def on_device(body: Body, expr: cst.BaseExpression, index: int, depth: int = 0) -> bool:
    """`expr` is built from a model's output or a loss (so it lives where the model runs), and no host copy
    (`.cpu()`, `.item()`, `float(...)`) lies between."""
    if depth > 12:
        return False
    if body.kind(expr) & Kind.LOSS and not body.kind(expr) & Kind.NUMBER:
        return True
    for n in _device_nodes(expr):
        if isinstance(n, cst.Call) and (body.is_forward(n) or body.kind(n.func) & Kind.CRITERION):
            return True
        if isinstance(n, (cst.Name, cst.Attribute)):
            name = dotted(n)
            d = body.reaching(name, index) if name else None
            value = assigned_value(d) if d is not None else None
            if d is not None and value is not None and on_device(body, value, d.index, depth + 1):
                return True
    return False


def _device_nodes(expr: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Nodes of `expr` standing for values, not into lambdas nor host copies."""
    stack = [expr]
    while stack:
        n = stack.pop()
        if isinstance(n, (cst.Lambda, cst.FunctionDef, cst.ClassDef)):
            continue
        if isinstance(n, cst.Call):
            func = n.func
            if isinstance(func, cst.Attribute) and func.attr.value in _HOST_METHODS:
                continue
            if isinstance(func, cst.Name) and func.value in _HOST_BUILTINS:
                continue
        yield n
        stack.extend([n.value] if isinstance(n, cst.Attribute) else children(n))


# -- values read only every N-th iteration ----------------------------------------------
def is_periodic(test: cst.BaseExpression) -> bool:
    """`step % N == 0`, `not i % log_every`, `(i + 1) % k == 0 and i > 0`: true one iteration in N."""
    return any(
        isinstance(n, cst.BinaryOperation)
        and isinstance(n.operator, cst.Modulo)
        and not isinstance(n.left, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString))
        for n in (test, *iter_nodes(test, into_functions=False))
    )


def periodic_readers(
    loop: Loop, name: str, skip: Collection[cst.CSTNode], rare: Callable[[cst.BaseExpression], bool] = is_periodic
) -> list[cst.If] | None:
    """The periodic `if`s (outermost) whose body holds every read of `name` in `loop`, the nodes of `skip`
    (the binding target) aside; None when some read runs every iteration (or there is none). `rare` says
    which `if` tests hold only now and then (default: `step % N == 0`)."""
    found: list[tuple[cst.Name, cst.If | None]] = []
    _reads_in_block(block_statements(loop.body), name, None, found, rare)
    reads = [(n, arm) for n, arm in found if n not in skip]
    if not reads or any(arm is None for _, arm in reads):
        return None
    arms: list[cst.If] = []
    for _, arm in reads:
        if arm is not None and arm not in arms:
            arms.append(arm)
    return arms


def read_outside(owner: cst.CSTNode, loop: Loop, name: str) -> bool:
    """`name` is read somewhere in `owner` (a function or the module, not its nested definitions) outside
    `loop`."""
    inside = {id(n) for n in _reads(loop, name)}
    stack = list(children(owner))
    while stack:
        n = stack.pop()
        if n is loop or isinstance(n, (cst.FunctionDef, cst.ClassDef)):
            continue
        if isinstance(n, cst.Name) and n.value == name and id(n) not in inside:
            return True
        stack.extend(_value_children(n))
    return False


def _reads_in_block(
    stmts: Sequence[cst.BaseStatement],
    name: str,
    arm: cst.If | None,
    out: list[tuple[cst.Name, cst.If | None]],
    rare: Callable[[cst.BaseExpression], bool],
) -> None:
    for stmt in stmts:
        if isinstance(stmt, cst.If):
            out.extend((n, arm) for n in _reads(stmt.test, name))
            inner = stmt if arm is None and rare(stmt.test) else arm
            _reads_in_block(block_statements(stmt.body), name, inner, out, rare)
            if isinstance(stmt.orelse, cst.If):
                _reads_in_block([stmt.orelse], name, arm, out, rare)
            elif stmt.orelse is not None:
                _reads_in_block(block_statements(stmt.orelse.body), name, arm, out, rare)
        elif isinstance(stmt, cst.BaseCompoundStatement) and not isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            for child in children(stmt):
                if isinstance(child, _BLOCKS):
                    _reads_in_block(_statements_of(child), name, arm, out, rare)
                else:
                    out.extend((n, arm) for n in _reads(child, name))
        else:
            out.extend((n, arm) for n in _reads(stmt, name))


def _statements_of(block: cst.CSTNode) -> list[cst.BaseStatement]:
    if isinstance(block, cst.If):
        return [block]
    if isinstance(block, cst.BaseSuite):
        return block_statements(block)
    suite = getattr(block, "body", None)
    return block_statements(suite) if isinstance(suite, cst.BaseSuite) else []


def _reads(node: cst.CSTNode, name: str) -> Iterator[cst.Name]:
    """`Name` nodes of `name` standing for the variable (not attribute names nor keywords), in `node`."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Name) and n.value == name:
            yield n
        stack.extend(_value_children(n))


def _value_children(n: cst.CSTNode) -> list[cst.CSTNode]:
    if isinstance(n, cst.Attribute):
        return [n.value]
    if isinstance(n, cst.Arg):
        return [n.value]
    return children(n)


def _state_names(arg: cst.BaseExpression) -> tuple[str, ...]:
    """`hidden` → (hidden,); `(h, c)` → (h, c); anything else → ()."""
    if isinstance(arg, cst.Name):
        return (arg.value,)
    if isinstance(arg, (cst.Tuple, cst.List)) and arg.elements:
        names = tuple(el.value.value for el in arg.elements if isinstance(el.value, cst.Name))
        return names if len(names) == len(arg.elements) else ()
    return ()


def _untouched(body: Body, loop: Loop, names: tuple[str, ...], stmt: cst.BaseStatement, call: cst.Call) -> bool:
    """In `loop`, `names` are bound only by `stmt`, and no in-place method, `for` over them or call made for
    its effect alone (`repackage_(hidden)`) may detach them where they stand."""
    for key, defs in body.defs.items():
        owner = key.partition(".")[0]
        if owner in names and any(loop in d.loops and d.stmt is not stmt for d in defs):
            return False
    for n in iter_nodes(loop.body, into_functions=False):
        if isinstance(n, cst.For) and _mentions(n.iter, names):
            return False
        if isinstance(n, cst.Call) and n is not call:
            func = n.func
            if isinstance(func, cst.Attribute) and func.attr.value.endswith("_") and _mentions(func.value, names):
                return False
        if isinstance(n, cst.Expr) and isinstance(n.value, cst.Call) and not _pure(body, n.value):
            if any(_mentions(a.value, names) for a in n.value.args):
                return False
    return True


def _pure(body: Body, call: cst.Call) -> bool:
    """A forward pass or a torch function that is not in-place: it leaves its arguments as they are."""
    if body.is_forward(call):
        return True
    qualname = body.ctx.qualname(call.func)
    return qualname is not None and qualname.startswith("torch.") and not qualname.endswith("_")


def _mentions(expr: cst.CSTNode, names: tuple[str, ...]) -> bool:
    return any(any(True for _ in _reads(expr, name)) for name in names)
