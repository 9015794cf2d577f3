"""The linted file's libcst expressions in the `ast` shapes inference.py evaluates: one inference for all files.

Rules ask `ctx.kind(expr)` about libcst nodes; the kind of a value is inference.py's answer over `ast`, the
same evaluator that reads every file's bindings and returns. This translation is structural and keeps what
that evaluator reads: names, attributes, calls with their arguments, binary operators, subscripted values,
the type of a constant, containers (a list's, tuple's or set's elements). Anything else (a comparison, a
lambda, a conditional expression, ...) is an opaque node, which infers NONE, as it did before. A
comprehension becomes an empty one of its type: its targets live in its own scope, which only the summary's
own node has (Semantics.element_kind asks about that one). Each node is translated once per lint.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from typing import Any

import libcst as cst

_MAX_DEPTH = 100  # nested expressions translated (deeper: opaque, before Python's recursion limit)
_OPAQUE = ast.expr()  # a node of no shape the evaluator reads: it infers NONE

_OPERATORS: dict[type, type[ast.operator]] = {
    cst.Add: ast.Add,
    cst.Subtract: ast.Sub,
    cst.Multiply: ast.Mult,
    cst.MatrixMultiply: ast.MatMult,
    cst.Divide: ast.Div,
    cst.FloorDivide: ast.FloorDiv,
    cst.Modulo: ast.Mod,
    cst.Power: ast.Pow,
    cst.LeftShift: ast.LShift,
    cst.RightShift: ast.RShift,
    cst.BitOr: ast.BitOr,
    cst.BitAnd: ast.BitAnd,
    cst.BitXor: ast.BitXor,
}
# a constant's type is all the evaluator reads of it (a number or not)
_CONSTANTS: dict[type, int | float | complex | str] = {
    cst.Integer: 0,
    cst.Float: 0.0,
    cst.Imaginary: 0j,
    cst.SimpleString: "",
    cst.ConcatenatedString: "",
    cst.FormattedString: "",
}
_COMPREHENSIONS: dict[type, Callable[[], ast.expr]] = {
    cst.ListComp: lambda: ast.ListComp(elt=_OPAQUE, generators=[]),
    cst.SetComp: lambda: ast.SetComp(elt=_OPAQUE, generators=[]),
    cst.GeneratorExp: lambda: ast.GeneratorExp(elt=_OPAQUE, generators=[]),
    cst.DictComp: lambda: ast.DictComp(key=_OPAQUE, value=_OPAQUE, generators=[]),
}


class AstExpressions:
    """libcst expression -> its `ast` shape, kept per node for one lint (rules ask about the same calls)."""

    def __init__(self) -> None:
        self._known: dict[int, tuple[cst.CSTNode, ast.expr]] = {}  # the node kept: its id stays its own

    def __call__(self, expr: cst.BaseExpression, depth: int = 0) -> ast.expr:
        known = self._known.get(id(expr))
        if known is not None:
            return known[1]
        translate = _SHAPES.get(type(expr))
        out = translate(self, expr, depth + 1) if translate is not None and depth < _MAX_DEPTH else _OPAQUE
        self._known[id(expr)] = (expr, out)
        return out

    def elements(self, elements: Sequence[cst.BaseElement], depth: int) -> list[ast.expr]:
        return [
            ast.Starred(value=self(e.value, depth)) if type(e) is cst.StarredElement else self(e.value, depth)
            for e in elements
        ]


def _name(t: AstExpressions, expr: cst.Name, depth: int) -> ast.expr:
    return ast.Name(id=expr.value)


def _attribute(t: AstExpressions, expr: cst.Attribute, depth: int) -> ast.expr:
    return ast.Attribute(value=t(expr.value, depth), attr=expr.attr.value)


def _call(t: AstExpressions, expr: cst.Call, depth: int) -> ast.expr:
    args: list[ast.expr] = []
    keywords: list[ast.keyword] = []
    for a in expr.args:
        value = t(a.value, depth)
        if a.keyword is not None:
            keywords.append(ast.keyword(arg=a.keyword.value, value=value))
        elif a.star == "**":
            keywords.append(ast.keyword(arg=None, value=value))
        else:
            args.append(ast.Starred(value=value) if a.star == "*" else value)
    return ast.Call(func=t(expr.func, depth), args=args, keywords=keywords)


def _binary(t: AstExpressions, expr: cst.BinaryOperation, depth: int) -> ast.expr:
    op = _OPERATORS[type(expr.operator)]()
    return ast.BinOp(left=t(expr.left, depth), op=op, right=t(expr.right, depth))


def _constant(t: AstExpressions, expr: cst.BaseExpression, depth: int) -> ast.expr:
    return ast.Constant(value=_CONSTANTS[type(expr)])


def _list(t: AstExpressions, expr: cst.List, depth: int) -> ast.expr:
    return ast.List(elts=t.elements(expr.elements, depth))


def _tuple(t: AstExpressions, expr: cst.Tuple, depth: int) -> ast.expr:
    return ast.Tuple(elts=t.elements(expr.elements, depth))


def _set(t: AstExpressions, expr: cst.Set, depth: int) -> ast.expr:
    return ast.Set(elts=t.elements(expr.elements, depth))


def _dict(t: AstExpressions, expr: cst.Dict, depth: int) -> ast.expr:
    return ast.Dict(keys=[], values=[])  # a container: its entries are not read


def _comprehension(t: AstExpressions, expr: cst.BaseExpression, depth: int) -> ast.expr:
    return _COMPREHENSIONS[type(expr)]()


def _subscript(t: AstExpressions, expr: cst.Subscript, depth: int) -> ast.expr:
    return ast.Subscript(value=t(expr.value, depth), slice=_OPAQUE)


_SHAPES: dict[type, Callable[[AstExpressions, Any, int], ast.expr]] = {
    cst.Name: _name,
    cst.Attribute: _attribute,
    cst.Call: _call,
    cst.BinaryOperation: _binary,
    **dict.fromkeys(_CONSTANTS, _constant),
    cst.List: _list,
    cst.Tuple: _tuple,
    cst.Set: _set,
    cst.Dict: _dict,
    **dict.fromkeys(_COMPREHENSIONS, _comprehension),
    cst.Subscript: _subscript,
}
