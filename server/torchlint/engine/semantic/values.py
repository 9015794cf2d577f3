"""Which expression built the object a name or `self.attr` holds at a point of use.

Kinds (semantics.py) say *what* a value is; some rules need *which* call built it:
the `nn.CrossEntropyLoss()` a `criterion(...)` call applies, the `Net()` behind
`model(x)`, the `TextDataset(...)` a DataLoader iterates. A name is followed to the
assignment that reaches the use in its function (in source order); one made under
an `if`, loop or `try` the use is not also under leaves it unknown, as does an
augmented assignment or a loop target. A plain function's parameter is what the
function's one call in the file passes. A name the function does not bind is looked
up among the module's top-level assignments (exactly one). `self.x` is the one
`self.x = ...` of its class. Moves and wrappers that return the same
object (`.to(device)`, `torch.compile(m)`, `DDP(m)`) are seen through.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

import libcst as cst

from torchlint.engine.core.callargs import get_arg
from torchlint.engine.core.walk import children, iter_nodes
from torchlint.engine.semantic import call_sites
from torchlint.engine.semantic.call_sites import CallSite, CallSites
from torchlint.engine.semantic.kinds import PASS_THROUGH, SAME_OBJECT_METHODS
from torchlint.engine.semantic.names import Imports, dotted
from torchlint.engine.semantic.project import ModuleSummary

if TYPE_CHECKING:
    from torchlint.engine.context import FileContext

_WRAPPERS = PASS_THROUGH | {"torch.nn.parallel.DistributedDataParallel", "torch.nn.DataParallel"}
_CONDITIONAL = (cst.If, cst.For, cst.While, cst.Try, cst.TryStar, cst.Match)


@dataclass(frozen=True)
class Where:
    """Where an expression is evaluated: its function (None at module level) and class."""

    function: cst.FunctionDef | None = None
    cls: cst.ClassDef | None = None


class _Unknown:
    """A binding whose value is not one expression (a parameter, a loop target, `x += 1`)."""


class _Parameter(_Unknown):
    """A parameter not reassigned before the use: its value is what the function's one caller passes."""

    def __init__(self, param: cst.Param) -> None:
        self.param = param


UNKNOWN = _Unknown()
Binding = cst.BaseExpression | _Unknown


class Values:
    def __init__(self, module: cst.Module, imports: Imports, sites: Callable[[], CallSites] | None = None) -> None:
        self.module = module
        self.imports = imports
        self.sites = sites or cache(lambda: call_sites.index(module))
        self._globals: dict[str, list[Binding]] | None = None

    def builder(self, expr: cst.BaseExpression, where: Where, depth: int = 0) -> tuple[cst.Call, Where] | None:
        """The call that built the object `expr` evaluates to (None: unknown)."""
        if depth > 16:
            return None
        if isinstance(expr, cst.Call):
            func = expr.func
            if isinstance(func, cst.Attribute) and func.attr.value in SAME_OBJECT_METHODS:
                inner = self.builder(func.value, where, depth + 1)
                if inner is not None:
                    return inner
            if self.imports.qualname(func) in _WRAPPERS and expr.args:
                return self.builder(expr.args[0].value, where, depth + 1)
            return expr, where
        found = self.value_of(expr, where)
        if found is None:
            return None
        return self.builder(found[0], found[1], depth + 1)

    def value_of(self, expr: cst.BaseExpression, where: Where) -> tuple[cst.BaseExpression, Where] | None:
        """The expression last assigned to the name or `self.attr` `expr`, and where it is evaluated."""
        if isinstance(expr, cst.Attribute):
            return self._attribute(expr, where)
        if not isinstance(expr, cst.Name):
            return None
        found = reaching(where.function or self.module, expr.value, expr)
        if isinstance(found, _Parameter) and where.function is not None and where.cls is None:
            return self._argument(where.function, found.param)
        if isinstance(found, _Unknown):
            return None
        if found is not None:
            return found, where
        if where.function is None:
            return None
        values = self.globals().get(expr.value, [])
        if len(values) == 1 and not isinstance(values[0], _Unknown):
            return values[0], Where()
        return None

    def _argument(self, fn: cst.FunctionDef, param: cst.Param) -> tuple[cst.BaseExpression, Where] | None:
        """What the one call of plain function `fn` in this file passes for `param` (None: not one call)."""
        known = self.sites()
        sites = known.by_key.get(("name", fn.name.value), [])
        if (
            len(known.functions.get(fn.name.value, ())) != 1
            or len(sites) != 1
            or any(a.star for a in sites[0].call.args)
        ):
            return None
        call, caller = sites[0].call, where_of(sites[0])
        positional = [*fn.params.posonly_params, *fn.params.params]
        index = next((i for i, p in enumerate(positional) if p is param), None)
        arg = get_arg(call, param.name.value, index)
        return (arg.value, caller) if arg is not None else None

    def _attribute(self, expr: cst.Attribute, where: Where) -> tuple[cst.BaseExpression, Where] | None:
        name = dotted(expr)
        if where.cls is None or not name or not name.startswith("self.") or name.count(".") != 1:
            return None
        found: list[tuple[cst.BaseExpression, Where]] = []
        for method in where.cls.body.body if isinstance(where.cls.body, cst.IndentedBlock) else ():
            if not isinstance(method, cst.FunctionDef):
                continue
            for node in iter_nodes(method.body, into_functions=False):
                if isinstance(node, cst.Assign) and any(dotted(t.target) == name for t in node.targets):
                    found.append((node.value, Where(method, where.cls)))
                elif isinstance(node, (cst.AnnAssign, cst.AugAssign)) and dotted(node.target) == name:
                    return None
        return found[0] if len(found) == 1 else None

    def globals(self) -> dict[str, list[Binding]]:
        """Every value assigned to each module-level name outside functions and classes."""
        if self._globals is None:
            found: dict[str, list[Binding]] = {}

            def bind(target: cst.BaseExpression, value: Binding) -> None:
                if isinstance(target, cst.Name):
                    found.setdefault(target.value, []).append(value)
                for n in () if isinstance(target, cst.Name) else iter_nodes(target):
                    if isinstance(n, cst.Name):
                        found.setdefault(n.value, []).append(UNKNOWN)

            for node in iter_nodes(self.module, into_functions=False):
                if isinstance(node, cst.Assign):
                    for t in node.targets:
                        bind(t.target, node.value)
                elif isinstance(node, cst.AnnAssign) and node.value is not None:
                    bind(node.target, node.value)
                elif isinstance(node, (cst.AugAssign, cst.For)):
                    bind(node.target, UNKNOWN)
                elif isinstance(node, cst.WithItem) and node.asname is not None:
                    bind(node.asname.name, UNKNOWN)
            self._globals = found
        return self._globals


def reaching(owner: cst.FunctionDef | cst.Module, name: str, use: cst.CSTNode) -> Binding | None:
    """The value of `name` at `use` inside `owner`: an expression, UNKNOWN, or None (not bound there)."""
    return _Reaching(owner, name, use).result()


class _Reaching:
    """One walk of `owner` in evaluation order up to `use`, tracking the last binding of `name`
    (a class, not nested recursive functions: those would be reference cycles left for the
    garbage collector on every question)."""

    def __init__(self, owner: cst.FunctionDef | cst.Module, name: str, use: cst.CSTNode) -> None:
        self.owner, self.name, self.use = owner, name, use
        self.bound: tuple[Binding, tuple[cst.CSTNode, ...]] | None = None
        if isinstance(owner, cst.FunctionDef):
            params = owner.params
            for p in (*params.posonly_params, *params.params, *params.kwonly_params):
                if p.name.value == name:
                    self.bound = (_Parameter(p), ())
            for star in (params.star_arg, params.star_kwarg):
                if isinstance(star, cst.Param) and star.name.value == name:
                    self.bound = (UNKNOWN, ())
        self.found: list[Binding | None] = []

    def result(self) -> Binding | None:
        owner = self.owner
        for stmt in owner.body if isinstance(owner, cst.Module) else (owner.body,):
            if self.visit(stmt, ()):
                break
        return self.found[0] if self.found else UNKNOWN

    def bind(self, target: cst.BaseExpression, value: Binding, stack: tuple[cst.CSTNode, ...]) -> None:
        if isinstance(target, cst.Name):
            if target.value == self.name:
                self.bound = (value, stack)
        elif isinstance(target, (cst.Tuple, cst.List)):
            pairs = isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(target.elements)
            starred = any(isinstance(el, cst.StarredElement) for el in target.elements)
            for i, el in enumerate(target.elements):
                paired = value.elements[i] if pairs and isinstance(value, (cst.Tuple, cst.List)) else None
                if isinstance(paired, cst.Element) and not starred:
                    self.bind(el.value, paired.value, stack)
                elif isinstance(value, cst.Call) and not starred:  # `a, b = model(x)`: b is `model(x)[1]`
                    item = cst.Subscript(value, [cst.SubscriptElement(cst.Index(cst.Integer(str(i))))])
                    self.bind(el.value, item, stack)
                else:
                    self.bind(el.value, UNKNOWN, stack)
        elif isinstance(target, cst.StarredElement):
            self.bind(target.value, UNKNOWN, stack)

    def visit(self, node: cst.CSTNode, stack: tuple[cst.CSTNode, ...]) -> bool:
        """Walk in evaluation order; True once `use` is reached."""
        if node is self.use:
            if self.bound is None:
                self.found.append(None)
            else:
                value, at = self.bound
                self.found.append(value if stack[: len(at)] == at else UNKNOWN)
            return True
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            if node.name.value == self.name:
                self.bind(cst.Name(self.name), UNKNOWN, stack)
            return False
        if isinstance(node, cst.Lambda):
            return False
        if isinstance(node, cst.Assign):
            if self.visit(node.value, stack):
                return True
            for t in node.targets:
                self.bind(t.target, node.value, stack)
            return False
        if isinstance(node, (cst.AnnAssign, cst.AugAssign)):
            if node.value is not None and self.visit(node.value, stack):
                return True
            self.bind(node.target, node.value if isinstance(node, cst.AnnAssign) and node.value else UNKNOWN, stack)
            return False
        if isinstance(node, cst.NamedExpr):
            if self.visit(node.value, stack):
                return True
            self.bind(node.target, node.value, stack)
            return False
        if isinstance(node, cst.WithItem) and node.asname is not None:
            if self.visit(node.item, stack):
                return True
            self.bind(node.asname.name, UNKNOWN, stack)
            return False
        inner = (*stack, node) if isinstance(node, _CONDITIONAL) else stack
        if isinstance(node, cst.For):
            if self.visit(node.iter, stack):
                return True
            self.bind(node.target, UNKNOWN, inner)
            return self.visit(node.body, inner) or (node.orelse is not None and self.visit(node.orelse, inner))
        return any(self.visit(child, inner) for child in children(node))


def where_of(site: CallSite) -> Where:
    """Where a call is evaluated: its function, and the class when that function is a method."""
    chain = site.chain
    last = chain[-1] if chain else None
    if type(last) is cst.ClassDef:
        return Where(None, last)
    if type(last) is cst.FunctionDef:
        outer = chain[-2] if len(chain) > 1 else None
        return Where(last, outer if type(outer) is cst.ClassDef else None)
    return Where()


def current_where(ctx: FileContext) -> Where:
    """Where the traversal is: its function, and the class when that function is a method."""
    fn, cls = ctx.current_function, ctx.current_class
    scope = ctx.scope
    method = cls is not None and scope is not None and scope.parent is not None and scope.parent.node is cls
    return Where(fn, cls if method else None)


def instantiated_class(ctx: FileContext, call: cst.Call) -> tuple[ModuleSummary, str] | None:
    """The summary of the file defining the class `call` instantiates, and its name: this file's class,
    or a project file's (through the index)."""
    found = ctx.semantics.definition(call.func)
    return found if found is not None and found[1] in found[0].class_defs else None
