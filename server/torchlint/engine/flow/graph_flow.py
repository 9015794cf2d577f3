"""Def-use facts inside one function body: which tensors carry an autograd graph.

Autograd rules ask questions ordinary kinds cannot answer: "is this tensor a
leaf?" (TL109), "do these two backward() calls run through one graph?" (TL107),
"does this accumulated loss ever reach backward()?" (TL105). We read one body
(a function, or the module) once, in source order, recording each assignment
with its statement index, enclosing loops, branch path and whether it ran under
`torch.no_grad()`. Reaching definitions are linear (the latest assignment
earlier in the text), which is exact for the straight-line code of a training
step and conservative elsewhere: unknown values answer UNKNOWN, never a finding.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from torchlint.engine.core.callargs import get_arg, is_name, truthy
from torchlint.engine.core.walk import SCOPES, block_statements, children, iter_nodes
from torchlint.engine.flow.blocks import BranchPath, Loop, Place, headers, statements
from torchlint.engine.flow.loop_events import autograd_backward, backward_call
from torchlint.engine.semantic.kinds import GRAPH_CUTTING_METHODS, NO_GRAD, NO_SAVED_TENSORS, TENSOR_FACTORIES, Kind
from torchlint.engine.semantic.names import dotted

if TYPE_CHECKING:
    from torchlint.engine.context import FileContext
    from torchlint.engine.semantic.semantics import Scope

Loops = tuple[Loop, ...]  # the loops enclosing a statement within its body, outermost first

# Calls whose result never carries the graph of their receiver.
_CUT_ATTRS = frozenset({"data", "grad", "shape", "dtype", "device", "ndim", "requires_grad", "is_leaf"})
_BUILTIN_CUTS = frozenset({"float", "int", "round", "str", "len", "print", "bool"})
_MOVES = frozenset({"cuda", "to", "double", "half", "bfloat16"})
TENSOR_OPS = frozenset(
    "add sub mul div matmul mm bmm pow exp log sqrt abs neg sum mean prod norm max min amax amin clamp "
    "sigmoid tanh relu softmax log_softmax view reshape flatten squeeze unsqueeze permute transpose t "
    "contiguous expand repeat clone float long int cumsum gather index_select masked_fill narrow "
    "chunk split unbind square rsqrt reciprocal std var logsumexp".split()
)


_NOT_TENSORS = (
    Kind.MODEL
    | Kind.WRAPPED
    | Kind.OPTIMIZER
    | Kind.SCHEDULER
    | Kind.DATALOADER
    | Kind.CRITERION
    | Kind.SCALER
    | Kind.ACCELERATOR
    | Kind.DEVICE
    | Kind.SAMPLER
)


class Grad(enum.Enum):
    """What autograd knows about a tensor value."""

    LEAF = "leaf requiring grad"
    NON_LEAF = "produced by an operation on tensors that require grad"
    NONE = "does not require grad"
    UNKNOWN = "unknown"


class Def:
    """One assignment of a body; compared by identity. A plain class: one is made for every assignment of
    every body read, and a frozen dataclass costs three times as much to make."""

    __slots__ = ("name", "value", "index", "stmt", "loops", "no_grad")

    def __init__(
        self,
        name: str,  # `x` or `self.x`
        value: cst.BaseExpression | None,  # None: bound by a for/with target (value unknown)
        index: int,  # statement order within the body
        stmt: cst.BaseStatement,
        loops: Loops,
        no_grad: bool,  # assigned under `with torch.no_grad()` / inference_mode
    ) -> None:
        self.name = name
        self.value = value
        self.index = index
        self.stmt = stmt
        self.loops = loops
        self.no_grad = no_grad

    def __repr__(self) -> str:
        return f"Def({self.name!r}, index={self.index})"


@dataclass(frozen=True)
class Backward:
    call: cst.Call
    target: cst.BaseExpression | None
    retain: bool
    index: int
    loops: Loops
    path: BranchPath


class Body:
    """One function (or module) body, read once in source order."""

    def __init__(self, ctx: FileContext, node: cst.FunctionDef | cst.Module, scope: Scope) -> None:
        self.ctx = ctx
        self.node = node
        self.scope = scope
        self.defs: dict[str, list[Def]] = {}
        # id(node) -> statement index of every node of the body (ids: a node's own __hash__ is a Python call,
        # and this is filled for every node); `nodes` holds them in source order
        self.order: dict[int, int] = {}
        self.nodes: list[cst.CSTNode] = []
        self.loop_of: dict[cst.CSTNode, Loops] = {}  # statement -> enclosing loops
        self.backwards: list[Backward] = []
        self.retained: set[str] = set()  # names with `.retain_grad()`
        self.made_leaf: dict[str, list[int]] = {}  # `x.requires_grad_()` / `x.requires_grad = True`
        self.modes: list[tuple[int, bool, cst.Call]] = []  # (index, is_eval, call) of model.eval()/train()
        self.consumed: set[str] = set()  # names returned or yielded
        self.stored: dict[str, list[cst.BaseExpression]] = {}  # `losses["gan"] = v`: values kept in a container
        # (call, index, loops, under no_grad) of every call; `forwards` keeps the model(x) ones
        self._calls: list[tuple[cst.Call, int, Loops, bool]] = []
        self._forwards: list[tuple[cst.Call, int, Loops, bool]] | None = None
        self._graph_memo: dict[Def, bool] = {}
        self._leaf_graph_memo: dict[Def, bool] = {}  # the same, counting requires_grad leaves as sources
        self._count = 0
        body = node.body if isinstance(node, cst.Module) else block_statements(node.body)
        decorators = () if isinstance(node, cst.Module) else node.decorators
        decorated = any(
            ctx.qualname(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator) in NO_GRAD
            for d in decorators
        )
        self._read(body, decorated)

    # -- reading ------------------------------------------------------------
    def _read(self, body: Sequence[cst.BaseStatement], decorated: bool) -> None:
        no_grad_withs: dict[cst.With, bool] = {}
        last: Place | None = None
        loops: Loops = ()
        path: BranchPath = ()
        no_grad = decorated
        for stmt, place in statements(body):
            if place is not last:  # the statements of one block share their Place
                last, loops, path = place, place.loops, place.path
                no_grad = decorated or any(self._turns_grad_off(w, no_grad_withs) for w in place.withs)
            index = self._count
            self._count += 1
            self._order(stmt, index)
            self.loop_of[stmt] = loops
            if type(stmt) is cst.SimpleStatementLine:
                for small in stmt.body:
                    self._small(small, stmt, index, loops, no_grad, path)
                continue
            for header in headers(stmt):
                self._mark(header, index, loops, path, no_grad)
            if isinstance(stmt, cst.For):
                # `for loss in (loss_a, loss_b):` — the target is one of the listed values
                listed = (
                    stmt.iter
                    if isinstance(stmt.iter, (cst.List, cst.Tuple)) and isinstance(stmt.target, cst.Name)
                    else None
                )
                for name in _names(stmt.target):
                    self._def(name, listed, index, stmt, loops + (stmt,), no_grad)
            elif isinstance(stmt, cst.With):
                for item in stmt.items:
                    if item.asname is not None:
                        for name in _names(item.asname.name):
                            self._def(name, None, index, stmt, loops, no_grad)

    def _order(self, node: cst.CSTNode, index: int) -> None:
        if id(node) not in self.order:
            self.nodes.append(node)
        self.order[id(node)] = index

    def _turns_grad_off(self, stmt: cst.With, memo: dict[cst.With, bool]) -> bool:
        off = memo.get(stmt)
        if off is None:
            off = memo[stmt] = any(
                self.ctx.qualname(item.item.func if isinstance(item.item, cst.Call) else item.item) in NO_GRAD
                for item in stmt.items
            )
        return off

    def _mark(self, expr: cst.CSTNode, index: int, loops: Loops, path: BranchPath, no_grad: bool) -> None:
        self._order(expr, index)
        order, nodes = self.order, self.nodes
        for n in iter_nodes(expr, into_functions=False):
            key = id(n)
            if key not in order:
                nodes.append(n)
            order[key] = index
            if type(n) is cst.Call:
                self._call(n, index, loops, path)
                self._calls.append((n, index, loops, no_grad))

    def _small(
        self,
        small: cst.BaseSmallStatement,
        stmt: cst.SimpleStatementLine,
        index: int,
        loops: Loops,
        no_grad: bool,
        path: BranchPath,
    ) -> None:
        self._mark(small, index, loops, path, no_grad)
        if type(small) is cst.Assign:  # types compared: isinstance() is slow on libcst's ABCs
            for t in small.targets:
                self._assign(t.target, small.value, index, stmt, loops, no_grad)
        elif type(small) is cst.AnnAssign and small.value is not None:
            self._assign(small.target, small.value, index, stmt, loops, no_grad)
        elif type(small) is cst.AugAssign:
            name = dotted(small.target)
            if name is not None:
                value = cst.BinaryOperation(left=small.target, operator=cst.Add(), right=small.value)
                self._def(name, value, index, stmt, loops, no_grad)
        elif type(small) is cst.Return and small.value is not None:
            self.consumed.update(_names(small.value, deep=False))
        elif type(small) is cst.Expr and isinstance(small.value, (cst.Yield, cst.Await)):
            self.consumed.update(_names(small.value, deep=False))

    def _assign(
        self,
        target: cst.BaseExpression,
        value: cst.BaseExpression,
        index: int,
        stmt: cst.BaseStatement,
        loops: Loops,
        no_grad: bool,
    ) -> None:
        if isinstance(target, cst.Attribute) and target.attr.value == "requires_grad":
            name = dotted(target.value)
            if name is not None and not (isinstance(value, cst.Name) and value.value == "False"):
                self.made_leaf.setdefault(name, []).append(index)
            return
        if isinstance(target, (cst.Tuple, cst.List)):
            values = value.elements if isinstance(value, (cst.Tuple, cst.List)) else None
            for i, el in enumerate(target.elements):
                v = values[i].value if values is not None and i < len(values) else None
                if v is None:
                    for name in _names(el.value):
                        self._def(name, None, index, stmt, loops, no_grad)
                else:
                    self._assign(el.value, v, index, stmt, loops, no_grad)
            return
        name = dotted(target)
        if name is not None:
            self._def(name, value, index, stmt, loops, no_grad)
        elif type(target) is cst.Subscript:
            container = dotted(target.value)
            if container is not None:
                self.stored.setdefault(container, []).append(value)

    def _def(
        self,
        name: str,
        value: cst.BaseExpression | None,
        index: int,
        stmt: cst.BaseStatement,
        loops: Loops,
        no_grad: bool,
    ) -> None:
        self.defs.setdefault(name, []).append(Def(name, value, index, stmt, loops, no_grad))

    def _call(self, call: cst.Call, index: int, loops: Loops, path: BranchPath) -> None:
        func = call.func
        if self.ctx.qualname(func) == "torch.autograd.backward":
            self.backwards.append(Backward(call, *autograd_backward(call), index, loops, path))
            return
        if not isinstance(func, cst.Attribute):
            return
        backward = backward_call(call, self.kind)
        if backward is not None:
            self.backwards.append(Backward(call, backward[0], backward[1], index, loops, path))
            return
        method, receiver = func.attr.value, dotted(func.value)
        if receiver is None:
            return
        if method == "retain_grad":
            self.retained.add(receiver)
        elif method == "requires_grad_" and not (call.args and is_name(call.args[0].value, "False")):
            self.made_leaf.setdefault(receiver, []).append(index)
        elif method in ("eval", "train") and self.kind(func.value) & Kind.MODEL:
            is_eval = method == "eval" or bool(call.args) and is_name(call.args[0].value, "False")
            self.modes.append((index, is_eval, call))

    # -- questions ----------------------------------------------------------
    @property
    def forwards(self) -> list[tuple[cst.Call, int, Loops, bool]]:
        """(call, index, loops, under no_grad) of every model(x) of the body, in source order: found on the
        first question (telling a model call asks the kind of every callee of the body)."""
        if self._forwards is None:
            self._forwards = [c for c in self._calls if self.is_forward(c[0])]
        return self._forwards

    def kind(self, expr: cst.BaseExpression) -> Kind:
        return self.ctx.semantics.infer(expr, self.scope)

    def is_forward(self, call: cst.Call) -> bool:
        """`model(x)` / `self.net(x)` / `model.forward(x)`: a module's forward pass (not `Net()`)."""
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "forward":
            func = func.value
        return dotted(func) is not None and bool(self.kind(func) & Kind.MODEL)

    def index(self, node: cst.CSTNode) -> int | None:
        return self.order.get(id(node))

    def reaching(self, name: str, index: int) -> Def | None:
        """The latest assignment to `name` in the text before statement `index`."""
        best = None
        for d in self.defs.get(name, ()):
            if d.index < index:
                best = d
        return best

    def defined_in(self, name: str, loop: cst.CSTNode) -> bool:
        return any(loop in d.loops for d in self.defs.get(name, ()))

    def carries_graph(self, d: Def, leaves: bool = False) -> bool:
        """The value assigned by `d` is (built from) the output of a model call; with `leaves`, also from
        an operation on a tensor that requires grad (`x @ w`, `w = torch.randn(..., requires_grad=True)`)."""
        memos = self._leaf_graph_memo if leaves else self._graph_memo
        memo = memos.get(d)
        if memo is None:
            memos[d] = False  # recursion guard
            memo = (
                not d.no_grad
                and d.value is not None
                and not self.kind(d.value) & _NOT_TENSORS
                and self._expr_graph(d.value, d.index, leaves)
            )
            memos[d] = memo
        return memo

    def bound_before_its_loop(self, backward: Backward, defs: Iterable[Def]) -> list[Def]:
        """Those of `defs` (of the graph `backward` runs through) bound before its innermost loop and never in
        it: each iteration after the first back-propagates through the graph the first one freed."""
        if not backward.loops:
            return []
        loop = backward.loops[-1]
        start = self.index(loop)
        assert start is not None, "the body's walk numbers every statement of it, its loops included"
        return [d for d in defs if d.index < start and loop not in d.loops and not self.defined_in(d.name, loop)]

    def graph_defs(self, expr: cst.BaseExpression, index: int, leaves: bool = False) -> set[Def]:
        """Every graph-carrying assignment that `expr` (at statement `index`) is built from; with `leaves`,
        graphs may also start at tensors that require grad (the leaves themselves carry none)."""
        out: set[Def] = set()
        todo = [(expr, index)]
        while todo:
            e, i = todo.pop()
            for name in _names(e, deep=False):
                d = self.reaching(name, i)
                if d is not None and d.value is not None and d not in out and self.carries_graph(d, leaves):
                    out.add(d)
                    todo.append((d.value, d.index))
        return out

    def saves_tensors(self, defs: Iterable[Def]) -> bool:
        """Does the graph these assignments build keep tensors for its backward (which the first backward
        frees)? No only when every operation of their values is a sum, an addition or a view
        (NO_SAVED_TENSORS, `+`, `-`, indexing); a model call or any other operation: yes."""
        for d in defs:
            for n in _uncut(d.value) if d.value is not None else ():
                if isinstance(n, cst.Call):
                    func = n.func
                    method = func.attr.value if isinstance(func, cst.Attribute) else None
                    q = self.ctx.qualname(func) or ""
                    if self.is_forward(n) or not (
                        method in NO_SAVED_TENSORS or q.partition("torch.")[2] in NO_SAVED_TENSORS
                    ):
                        return True
                elif isinstance(n, cst.BinaryOperation) and not isinstance(n.operator, (cst.Add, cst.Subtract)):
                    return True
                elif isinstance(n, cst.UnaryOperation) and not isinstance(n.operator, cst.Minus):
                    return True
        return False

    def _expr_graph(self, expr: cst.BaseExpression, index: int, leaves: bool = False) -> bool:
        for n in _uncut(expr):
            if isinstance(n, cst.Call) and self.is_forward(n):
                return True
            if isinstance(n, (cst.Name, cst.Attribute)):
                name = dotted(n)
                d = self.reaching(name, index) if name else None
                if d is not None and self.carries_graph(d, leaves):
                    return True
        return leaves and any(self._requires_grad_leaf(name, index) for name in self._operands(expr))

    def _operands(self, expr: cst.BaseExpression) -> Iterator[str]:
        """Names that a tensor operation in `expr` computes with (`x @ w`, `w.t()`, `torch.tanh(w)`):
        not a bare reference or a container (`params = [w, b]`), which builds no graph."""
        for n in _uncut(expr):
            if isinstance(n, cst.BinaryOperation):
                operands: list[cst.BaseExpression] = [n.left, n.right]
            elif isinstance(n, cst.UnaryOperation):
                operands = [n.expression]
            elif isinstance(n, cst.Call) and (self.ctx.qualname(n.func) or "").startswith("torch."):
                operands = [a.value for a in n.args if a.keyword is None and not a.star]
            elif isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value in TENSOR_OPS:
                operands = [n.func.value]
            else:
                continue
            yield from (name for o in operands if (name := dotted(o)) is not None)

    def _requires_grad_leaf(self, name: str, index: int) -> bool:
        """`name` at statement `index` is a tensor created with `requires_grad=True`, or made one by
        `.requires_grad_()` / `.requires_grad = True`: autograd records every operation on it."""
        d = self.reaching(name, index)
        start = -1 if d is None else d.index
        if any(start <= i < index for i in self.made_leaf.get(name, ())):
            return True
        value = d.value if d is not None else None
        if not isinstance(value, cst.Call):
            return False
        if isinstance(value.func, cst.Attribute) and value.func.attr.value == "requires_grad_":
            return not (value.args and is_name(value.args[0].value, "False"))
        head, _, last = (self.ctx.qualname(value.func) or "").rpartition(".")
        return head == "torch" and last in TENSOR_FACTORIES and truthy(get_arg(value, "requires_grad"))

    def grad_status(self, expr: cst.BaseExpression, index: int, depth: int = 0) -> Grad:
        """Leaf / non-leaf / no grad for the tensor `expr` evaluated at statement `index`."""
        if depth > 20:
            return Grad.UNKNOWN
        if isinstance(expr, (cst.Name, cst.Attribute)) and not (
            isinstance(expr, cst.Attribute) and expr.attr.value in _CUT_ATTRS
        ):
            name = dotted(expr)
            d = self.reaching(name, index) if name else None
            if d is None or d.value is None:
                return Grad.UNKNOWN
            status = Grad.NONE if d.no_grad else self.grad_status(d.value, d.index, depth + 1)
            if any(d.index <= i < index for i in self.made_leaf.get(d.name, ())) and status is not Grad.NON_LEAF:
                return Grad.LEAF
            return status
        if isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString)):
            return Grad.NONE
        if isinstance(expr, cst.BinaryOperation):
            return _combine(
                [self.grad_status(expr.left, index, depth + 1), self.grad_status(expr.right, index, depth + 1)]
            )
        if isinstance(expr, cst.UnaryOperation):
            return _combine([self.grad_status(expr.expression, index, depth + 1)])
        if isinstance(expr, cst.Subscript):
            return _combine([self.grad_status(expr.value, index, depth + 1)])
        if isinstance(expr, cst.Call):
            return self._call_status(expr, index, depth)
        return Grad.UNKNOWN

    def _call_status(self, call: cst.Call, index: int, depth: int) -> Grad:
        qualname = self.ctx.qualname(call.func)
        args = [a.value for a in call.args if a.keyword is None and not a.star]
        if qualname is not None:
            head, _, last = qualname.rpartition(".")
            if qualname in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
                frozen = get_arg(call, "requires_grad", 1)
                return Grad.NONE if frozen is not None and is_name(frozen.value, "False") else Grad.LEAF
            if head == "torch" and last in TENSOR_FACTORIES and last not in ("stack", "cat"):
                return Grad.LEAF if truthy(get_arg(call, "requires_grad")) else Grad.NONE
            if qualname.startswith(("torch.", "torch.nn.functional.")):
                return _combine([self.grad_status(a, index, depth + 1) for a in _flatten(args)])
            return Grad.UNKNOWN
        func = call.func
        if self.is_forward(call):
            return Grad.NON_LEAF
        if self.kind(func) & Kind.CRITERION:
            return _combine([self.grad_status(a, index, depth + 1) for a in args])
        if not isinstance(func, cst.Attribute):
            return Grad.UNKNOWN
        method = func.attr.value
        if method == "detach":
            return Grad.NONE
        receiver = self.grad_status(func.value, index, depth + 1)
        if method == "requires_grad_":
            if call.args and is_name(call.args[0].value, "False"):
                return Grad.NONE if receiver is not Grad.NON_LEAF else receiver
            return Grad.LEAF if receiver in (Grad.NONE, Grad.LEAF) else receiver
        if method in _MOVES:
            return Grad.NON_LEAF if receiver in (Grad.LEAF, Grad.NON_LEAF) else receiver
        if method in TENSOR_OPS:
            return _combine([receiver, *(self.grad_status(a, index, depth + 1) for a in args)])
        return Grad.UNKNOWN

    def feeds_backward(self, name: str, returned: bool = True) -> bool:
        """`name` (or a value built from it, or a container it was stored in) is back-propagated or (unless
        not `returned`) returned from this body."""
        reached: set[str] = set()
        todo = list(self.consumed) if returned else []
        for backward in self.backwards:
            if backward.target is not None:
                todo.extend(_names(backward.target, deep=True))
        while todo:
            n = todo.pop()
            if n in reached:
                continue
            reached.add(n)
            for d in self.defs.get(n, ()):
                if d.value is not None:
                    todo.extend(_names(d.value, deep=True))
            for v in self.stored.get(n, ()):  # a returned dict of losses returns each of them
                todo.extend(_names(v, deep=True))
        return name in reached


def _combine(statuses: Iterable[Grad]) -> Grad:
    statuses = list(statuses)
    if any(s in (Grad.LEAF, Grad.NON_LEAF) for s in statuses):
        return Grad.NON_LEAF
    if all(s is Grad.NONE for s in statuses):
        return Grad.NONE
    return Grad.UNKNOWN


def _flatten(args: Iterable[cst.BaseExpression]) -> Iterator[cst.BaseExpression]:
    for a in args:
        if isinstance(a, (cst.List, cst.Tuple)):
            yield from (el.value for el in a.elements)
        else:
            yield a


def _uncut(expr: cst.CSTNode, cut: bool = True) -> Iterator[cst.CSTNode]:
    """Nodes of `expr` that can stand for values (not attribute names), not into lambdas;
    with `cut`, not into `.detach()`, `.item()`, `.data`, `.shape` and the like."""
    stack = [expr]
    while stack:  # compared by type: isinstance() on libcst's ABC-based classes is slow on this path
        n = stack.pop()
        if type(n) in SCOPES:
            continue
        if cut and type(n) is cst.Call:
            func = n.func
            if type(func) is cst.Attribute and func.attr.value in GRAPH_CUTTING_METHODS:
                continue
            if type(func) is cst.Name and func.value in _BUILTIN_CUTS:
                continue
        if type(n) is cst.Attribute:
            if cut and n.attr.value in _CUT_ATTRS:
                continue
            yield n
            stack.append(n.value)  # `a.b`: the value `a`; `b` names an attribute, not a variable
            continue
        yield n
        stack.extend(children(n))


def _names(expr: cst.CSTNode, deep: bool = True) -> list[str]:
    """Dotted names (`x`, `self.total`, `logits.pow`) used in `expr`; not deep: stop at cuts."""
    return [
        name for n in _uncut(expr, cut=not deep) if isinstance(n, (cst.Name, cst.Attribute)) and (name := dotted(n))
    ]


def body_of(ctx: FileContext) -> Body:
    """The Body of the function the traversal is in (the module at top level)."""
    body = body_for(ctx, ctx.current_function or ctx.module)
    assert body is not None, "the traversal is inside the node it asks about"
    return body


def body_for(ctx: FileContext, node: cst.FunctionDef | cst.Module) -> Body | None:
    """The Body of `node`: the module, a function the traversal is in, or a method of the current class
    (where `self.` attributes are set up); None for anything else."""
    bodies = ctx.graph_bodies
    body = bodies.get(node)
    if body is None:
        scope = ctx.scope
        while scope is not None and scope.node is not node:
            if isinstance(node, cst.FunctionDef) and scope.node is ctx.current_class:
                scope = ctx.semantics.scope_for(node, scope)  # a sibling method: its scope hangs off the class
                break
            scope = scope.parent
        if scope is None:
            return None
        body = bodies[node] = Body(ctx, node, scope)
    return body


def assignments(ctx: FileContext, expr: cst.BaseExpression, index: int) -> list[tuple[Body, Def]]:
    """The assignments of the name or `self.` attribute `expr` that can reach statement `index` of the body
    the traversal is in: the latest earlier one there; for a name that body never assigns, the module's
    (unless a parameter or an enclosing function may bind it); for `self.x`, those in every method of the
    current class (its set-up). Empty: not in sight."""
    name = dotted(expr)
    if name is None:
        return []
    if "." not in name:
        body = body_of(ctx)
        d = body.reaching(name, index)
        if d is not None:
            return [(body, d)]
        fn = ctx.current_function
        if fn is None or len(ctx.functions) > 1 or name in _parameters(fn):
            return []
        module = body_for(ctx, ctx.module)
        return [(module, d) for d in module.defs.get(name, ())] if module is not None else []
    cls = ctx.current_class
    if not name.startswith("self.") or name.count(".") != 1 or cls is None:
        return []
    methods = [m for m in block_statements(cls.body) if isinstance(m, cst.FunctionDef)]
    bodies = [b for b in (body_for(ctx, m) for m in methods) if b is not None]
    return [(b, d) for b in bodies for d in b.defs.get(name, ())]


def _parameters(fn: cst.FunctionDef) -> set[str]:
    p = fn.params
    stars = [s for s in (p.star_arg, p.star_kwarg) if isinstance(s, cst.Param)]
    return {a.name.value for a in (*p.posonly_params, *p.params, *p.kwonly_params, *stars)}


def graph_nodes(expr: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The nodes of `expr` through which it can carry a graph: not into lambdas, `.detach()`,
    `.item()`, `.data`, `.shape` and the like."""
    return _uncut(expr)


def model_calls(body: Body, expr: cst.BaseExpression, index: int) -> list[cst.Call]:
    """The forward calls whose graph `expr` (at statement `index`) carries: in `expr` itself or in the
    graph-carrying assignments it is built from; not through `.detach()`, `.item()` or `no_grad`."""
    sources = [expr, *(d.value for d in body.graph_defs(expr, index) if d.value is not None)]
    return [n for e in sources for n in _uncut(e) if isinstance(n, cst.Call) and body.is_forward(n)]


def names_read(expr: cst.CSTNode) -> list[str]:
    """The names and `self.` attributes whose values `expr` is built from (not through graph cuts)."""
    return _names(expr, deep=False)
