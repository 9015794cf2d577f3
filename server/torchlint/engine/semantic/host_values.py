"""Host values: tensors a function only uses as Python numbers, never as device operands.

A tensor whose every use is a Python index or slice bound (`x[:, off:off + s]`), a `range()`, `int()`,
`len()`, `float()` or `bool()` argument, a `.item()` / `.tolist()` / `.numpy()` receiver, the receiver of a method
computed from it alone whose result is such a value (`rand.topk(k).indices` as an advanced index: indexing a CUDA
tensor with a CPU index tensor is allowed, an index is not a device operand), or the iterable of a
`for` whose variable is itself such a value (`for end in torch.cumsum(widths, 0): out = x[start:end]`) never
meets the model's activations: where it was created does not matter, and moving it to the accelerator would
only add device syncs. Rules that judge device operands (TL304) ask `ctx.host_values.host_only(fn, name)`.

Evidence only: any other use (an operand of arithmetic with another tensor outside an index, an argument of
any other call, a return, a use in a nested def or lambda) makes the name a device operand as far as anyone
can tell.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from torchlint.engine.core.call_binding import bind, signature_of
from torchlint.engine.core.walk import SCOPES, children, parent_map
from torchlint.engine.semantic.host_params import HOST_BUILTINS, TO_HOST, host_only_parameters
from torchlint.engine.semantic.kinds import RECEIVER_ONLY_METHODS, RESULT_FIELDS

if TYPE_CHECKING:
    from torchlint.engine.context import FileContext

# Arithmetic that keeps a host value a host value inside an index (`off + s`).
_ARITHMETIC = (cst.BinaryOperation, cst.UnaryOperation)
# Arguments that are no tensor.
_LITERALS = (cst.Integer, cst.Float, cst.SimpleString)
_CONSTANTS = frozenset({"True", "False", "None"})


class HostValues:
    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self._parents: dict[cst.FunctionDef, dict[int, cst.CSTNode]] = {}
        self._known: dict[tuple[cst.FunctionDef, str], bool] = {}

    def host_only(self, fn: cst.FunctionDef, name: str) -> bool:
        """Every use of the local `name` in `fn` is a host use (and there is one)."""
        return self._host_only(fn, name, set())

    def _host_only(self, fn: cst.FunctionDef, name: str, seen: set[str]) -> bool:
        key = (fn, name)
        if key in self._known:
            return self._known[key]
        if name in seen:
            return True  # `start = end` inside the loop over `end`: the cycle adds no other use
        seen.add(name)
        parents = self._parents.get(fn)
        if parents is None:
            parents = self._parents[fn] = parent_map(fn.body)
        uses = 0
        result = True
        for node in _names(fn.body, name):
            if node is None:
                result = False  # read in a nested def or lambda: runs elsewhere
                break
            role = self._use(fn, node, parents, seen)
            if role is None:
                continue  # a binding
            uses += 1
            if not role:
                result = False
                break
        result = result and uses > 0
        if len(seen) == 1:
            self._known[key] = result
        seen.discard(name)
        return result

    def host_only_value(self, fn: cst.FunctionDef, expr: cst.BaseExpression) -> bool:
        """The tensor `expr` (a call in `fn`'s body) is only used as a host value: through torch functions that
        derive from it alone and subscripts of their results (`torch.cumsum(torch.unique_consecutive(
        torch.tensor(widths), return_counts=True)[1], 0)`) into a host use or a host-only name."""
        parents = self._parents.get(fn)
        if parents is None:
            parents = self._parents[fn] = parent_map(fn.body)
        return self._flow(fn, expr, parents, set())

    def _use(self, fn: cst.FunctionDef, node: cst.Name, parents: dict[int, cst.CSTNode], seen: set[str]) -> bool | None:
        """True: a host use; False: any other use; None: `node` is bound here, not read."""
        if _binds(parents, node):
            return None
        return self._flow(fn, node, parents, seen)

    def _flow(self, fn: cst.FunctionDef, child: cst.CSTNode, parents: dict[int, cst.CSTNode], seen: set[str]) -> bool:
        """Where the value of `child` goes is a host use (True) or anything else (False)."""
        parent = parents.get(id(child))
        while isinstance(parent, _ARITHMETIC):
            child, parent = parent, parents.get(id(parent))
        if isinstance(parent, (cst.Index, cst.Slice)):
            return True
        if isinstance(parent, cst.Comparison) and all(_literal(e) for e in _operands(parent) if e is not child):
            test = parents.get(id(parent))  # `if start == 0:` reads a Python bool
            return isinstance(test, (cst.If, cst.While)) and test.test is parent
        if isinstance(parent, cst.Subscript) and parent.value is child:
            return self._flow(fn, parent, parents, seen)  # an element of it lives where it lives
        if isinstance(parent, cst.Arg):
            call = parents.get(id(parent))
            if not isinstance(call, cst.Call) or parent.value is not child:
                return False
            if self._host_builtin(call.func, fn) or self._host_parameter(call, parent):
                return True
            return self._derives(call, parent) and self._flow(fn, call, parents, seen)
        if isinstance(parent, cst.Attribute) and parent.value is child:
            call = parents.get(id(parent))
            attr = parent.attr.value
            if attr in TO_HOST:
                return isinstance(call, cst.Call)
            if attr in RECEIVER_ONLY_METHODS and isinstance(call, cst.Call) and call.func is parent:
                return self._flow(fn, call, parents, seen)  # `rand.topk(k, dim=-1)`: where `rand` is
            return attr in RESULT_FIELDS and self._flow(fn, parent, parents, seen)  # `.indices`
        if isinstance(parent, cst.For) and parent.iter is child:
            target = parent.target
            return isinstance(target, cst.Name) and self._host_only(fn, target.value, seen)
        if isinstance(parent, cst.Assign) and parent.value is child and len(parent.targets) == 1:
            target = parent.targets[0].target
            return isinstance(target, cst.Name) and self._host_only(fn, target.value, seen)
        return False

    def _host_parameter(self, call: cst.Call, arg: cst.Arg) -> bool:
        """`arg` binds a parameter that the called project function (this file's or another's) only uses as a
        host value (host_params.py): `commons.fused_add_tanh_sigmoid_multiply(a, b, n_channels_tensor)`."""
        found = self.ctx.semantics.function_definition(call.func)
        bound = bind(call, signature_of(found[1].args)) if found is not None else None
        if found is None or bound is None:
            return False
        name = next(n for n, a in bound.items() if a is arg)
        return name in host_only_parameters(found[0], found[1].name)

    def _derives(self, call: cst.Call, arg: cst.Arg) -> bool:
        """A torch function computing from `arg` alone (its other arguments are literals): the result is a
        tensor where `arg` is, and meets no other tensor."""
        if not (self.ctx.qualname(call.func) or "").startswith("torch."):
            return False
        return all(a is arg or _literal(a.value) for a in call.args)

    def _host_builtin(self, func: cst.BaseExpression, fn: cst.FunctionDef) -> bool:
        """`range`/`int`/`len`/...: the builtin, not a name this file binds (scopes.py, Python's rules)."""
        return (
            isinstance(func, cst.Name)
            and func.value in HOST_BUILTINS
            and func.value not in self.ctx.imports.table
            and self.ctx.scopes.binding_scope(func.value, fn) is None
        )


def _literal(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.UnaryOperation):
        expr = expr.expression
    return isinstance(expr, _LITERALS) or (isinstance(expr, cst.Name) and expr.value in _CONSTANTS)


def _operands(cmp: cst.Comparison) -> list[cst.BaseExpression]:
    return [cmp.left, *(c.comparator for c in cmp.comparisons)]


def _binds(parents: dict[int, cst.CSTNode], node: cst.Name) -> bool:
    """`node` is where a value is bound to the name (assignment, loop or `with ... as` target, augmented
    assignment, parameter, an element of a tuple target), not a read."""
    child: cst.CSTNode = node
    parent = parents.get(id(node))
    while isinstance(parent, (cst.Element, cst.StarredElement, cst.Tuple, cst.List)):
        child, parent = parent, parents.get(id(parent))  # `a, b = ...`: up to the whole target
    if isinstance(parent, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor)):
        return parent.target is child
    if isinstance(parent, (cst.WithItem, cst.AsName)):
        return child is not getattr(parent, "item", None)
    return isinstance(parent, (cst.Param, cst.NameItem))


def _names(root: cst.CSTNode, name: str) -> list[cst.Name | None]:
    """The `Name` nodes spelling `name` under root; None for one inside a nested def or lambda."""
    out: list[cst.Name | None] = []
    stack: list[tuple[cst.CSTNode, bool]] = [(root, False)]
    while stack:
        node, nested = stack.pop()
        if type(node) is cst.Name:
            if node.value == name:
                out.append(None if nested else node)
            continue
        if type(node) is cst.Attribute:
            stack.append((node.value, nested))  # `.attr` is a field name
            continue
        if type(node) is cst.Arg:
            stack.append((node.value, nested))  # `keyword=` is a parameter name
            continue
        inner = nested or type(node) in SCOPES
        stack.extend((c, inner) for c in children(node))
    return out
