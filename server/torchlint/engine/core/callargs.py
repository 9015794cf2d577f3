"""Reading and editing call arguments: the shared vocabulary of argument-level rules.

Many rules ask "was `weights_only=` passed?" or "is `shuffle` literally True?"
and fix by adding or dropping one keyword; this module says it once, including
the positional spellings and the `**kwargs` that may hide any keyword.
"""

from __future__ import annotations

import libcst as cst

NO_SPACE = cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))  # `name=value`, as written by hand


def get_arg(call: cst.Call, name: str, position: int | None = None) -> cst.Arg | None:
    """The argument bound to parameter `name` (by keyword, or at `position` if given)."""
    positional = 0
    for a in call.args:
        if a.keyword is not None:
            if a.keyword.value == name:
                return a
        elif not a.star:
            if position is not None and positional == position:
                return a
            positional += 1
    return None


def has_star(call: cst.Call) -> bool:
    """`*args` / `**kwargs` present: any keyword may be passed invisibly."""
    return any(a.star for a in call.args)


def is_name(expr: cst.BaseExpression | None, value: str) -> bool:
    return isinstance(expr, cst.Name) and expr.value == value


def truthy(arg: cst.Arg | None) -> bool:
    """Passed, and not literally `False` or `None` (a variable counts as true)."""
    return arg is not None and not (is_name(arg.value, "False") or is_name(arg.value, "None"))


def int_value(expr: cst.BaseExpression | None) -> int | None:
    """The value of an integer literal (`3`, `-1`), else None."""
    if isinstance(expr, cst.Integer):
        return int(expr.evaluated_value)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        inner = int_value(expr.expression)
        return -inner if inner is not None else None
    return None


def literal(expr: cst.BaseExpression) -> object:
    """The constant a literal is (a number, a string, True / False / None); ... when `expr` is not one."""
    if isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString)):
        return expr.evaluated_value
    if isinstance(expr, cst.Name) and expr.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[expr.value]
    return ...


def string_value(expr: cst.BaseExpression | None) -> str | None:
    if isinstance(expr, cst.SimpleString):
        value = expr.evaluated_value
        return value if isinstance(value, str) else None
    return None


def with_keyword(call: cst.Call, name: str, value: str) -> cst.Call:
    """`call` with `name=value` appended as the last argument."""
    args = list(call.args)
    if args and not isinstance(args[-1].comma, cst.Comma):
        args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    args.append(cst.Arg(keyword=cst.Name(name), value=cst.parse_expression(value), equal=NO_SPACE))
    return call.with_changes(args=args)


def without_arg(call: cst.Call, arg: cst.Arg) -> cst.Call:
    """`call` with one argument removed (the comma of the new last argument follows the old one)."""
    args = list(call.args)
    i = args.index(arg)
    del args[i]
    if args and i == len(args):  # removed the last one: the new last takes its comma
        args[-1] = args[-1].with_changes(comma=arg.comma)
    return call.with_changes(args=args)
