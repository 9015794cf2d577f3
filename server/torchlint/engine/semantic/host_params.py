"""Parameters a function of any project file only uses as Python numbers, read over its `ast` summary.

A tensor handed to such a parameter is a host value at the call too: vits passes `n_channels_tensor` to
`commons.fused_add_tanh_sigmoid_multiply(a, b, n_channels)`, which only reads `n_channels[0]` as a slice bound.
The uses that count are host_values.py's (index, slice bound, `range`/`int`/`len`/... argument, `.item()`,
`if n == 0:`, a loop or a name they flow into, methods computed from the value alone); read over the tree other
files are known by, since a project file is never parsed by libcst. Kept per function in the summary.
"""

from __future__ import annotations

import ast

from torchlint.engine.semantic.kinds import RECEIVER_ONLY_METHODS, RESULT_FIELDS
from torchlint.engine.semantic.project import ModuleSummary

HOST_BUILTINS = frozenset({"range", "int", "len", "float", "bool"})  # read their argument as a number or size
TO_HOST = frozenset({"item", "tolist", "numpy"})  # copy the value to the host as Python data
_SCOPES: tuple[type[ast.AST], ...] = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_SCOPES += (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_KEY = "host_only_parameters"


def host_only_parameters(summary: ModuleSummary, name: str) -> frozenset[str]:
    """The parameters of the top-level function `name` of `summary` whose every use is a host use."""
    known = summary.derived.setdefault(_KEY, {})
    assert isinstance(known, dict)
    if name not in known:
        fn = summary.functions.get(name)
        known[name] = frozenset() if fn is None else _Reading(summary, fn).host_only_parameters()
    found: frozenset[str] = known[name]
    return found


def positional_parameters(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    return [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]


class _Reading:
    def __init__(self, summary: ModuleSummary, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.summary = summary
        self.fn = fn
        self.parents: dict[ast.AST, ast.AST] = {}
        self.loads: dict[str, list[ast.Name | None]] = {}  # None: read in a nested scope
        stack: list[tuple[ast.AST, bool]] = [(stmt, False) for stmt in fn.body]
        while stack:
            node, nested = stack.pop()
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                self.loads.setdefault(node.id, []).append(None if nested else node)
            inner = nested or isinstance(node, _SCOPES)
            for child in ast.iter_child_nodes(node):
                self.parents[child] = node
                stack.append((child, inner))

    def host_only_parameters(self) -> frozenset[str]:
        args = self.fn.args
        names = [*positional_parameters(self.fn), *(a.arg for a in args.kwonlyargs)]
        return frozenset(n for n in names if self._host_only(n, set()))

    def _host_only(self, name: str, seen: set[str]) -> bool:
        if name in seen:
            return True  # a cycle through loop variables adds no other use
        seen.add(name)
        uses = self.loads.get(name, [])
        return bool(uses) and all(u is not None and self._flow(u, seen) for u in uses)

    def _flow(self, child: ast.AST, seen: set[str]) -> bool:
        """Where the value of `child` goes is a host use."""
        parent = self.parents.get(child)
        while isinstance(parent, (ast.BinOp, ast.UnaryOp)):
            child, parent = parent, self.parents.get(parent)
        if isinstance(parent, ast.Slice):
            return True
        if isinstance(parent, ast.Tuple) and isinstance(self.parents.get(parent), ast.Subscript):
            return self.parents[parent].slice is parent  # type: ignore[attr-defined]  # `x[rows, keep]`
        if isinstance(parent, ast.Subscript):
            return parent.slice is child or self._flow(parent, seen)  # an index, or an element of the value
        if isinstance(parent, ast.Compare) and all(
            isinstance(e, ast.Constant) for e in (parent.left, *parent.comparators) if e is not child
        ):
            test = self.parents.get(parent)
            return isinstance(test, (ast.If, ast.While)) and test.test is parent
        if isinstance(parent, ast.Call) and child in parent.args:
            func = parent.func
            return isinstance(func, ast.Name) and func.id in HOST_BUILTINS and self._builtin(func.id)
        if isinstance(parent, ast.Attribute) and parent.value is child:
            call = self.parents.get(parent)
            if parent.attr in TO_HOST:
                return isinstance(call, ast.Call) and call.func is parent
            if parent.attr in RECEIVER_ONLY_METHODS and isinstance(call, ast.Call) and call.func is parent:
                return self._flow(call, seen)
            return parent.attr in RESULT_FIELDS and self._flow(parent, seen)
        if isinstance(parent, ast.For) and parent.iter is child:
            return isinstance(parent.target, ast.Name) and self._host_only(parent.target.id, seen)
        if isinstance(parent, ast.Assign) and parent.value is child and len(parent.targets) == 1:
            target = parent.targets[0]
            return isinstance(target, ast.Name) and self._host_only(target.id, seen)
        return False

    def _builtin(self, name: str) -> bool:
        """`int` is the builtin: neither the function nor its module binds the name."""
        s = self.summary
        bound = name in positional_parameters(self.fn) or any(
            isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in self.parents
        )
        return not bound and name not in s.imports and name not in s.functions and name not in s.globals
