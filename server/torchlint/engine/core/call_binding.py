"""Binding a call's arguments to a signature, and rebuilding the call for another one.

An API-migration fix (`torch.cuda.amp.autocast(flag)` -> `torch.amp.autocast("cuda", ...)`)
is right only if every argument lands on the parameter it meant: a positional `flag` is
`enabled` in the old signature and would be `dtype` in the new one. So the old call is
bound by name to the old signature, and the new call is built from the names. Whenever
the binding is not certain (`*args`, `**kwargs`, a keyword the signature lacks, too many
positionals) there is no new call. Arguments keep their own text, comments and commas.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from functools import cache

import libcst as cst

from torchlint.engine.core.callargs import NO_SPACE

_COMMA = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))


@dataclass(frozen=True)
class Param:
    name: str
    positional: bool  # may be passed by position
    keyword: bool  # may be passed by keyword
    default: str | None  # its source text; None: required


@dataclass(frozen=True)
class Signature:
    params: tuple[Param, ...]
    var_positional: bool = False
    var_keyword: bool = False

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    def positional_index(self, name: str) -> int | None:
        positional = [p.name for p in self.params if p.positional]
        return positional.index(name) if name in positional else None


@cache
def signature(text: str) -> Signature:
    """A signature from a `def` parameter list: "input, size=None, *, out=None"."""
    return signature_of(ast.parse(f"def f({text}): pass").body[0].args)  # type: ignore[attr-defined]


def signature_of(args: ast.arguments) -> Signature:
    """The signature of a parsed `def` (a project function read from its file's `ast` summary)."""
    positional = [*args.posonlyargs, *args.args]
    defaults = [None] * (len(positional) - len(args.defaults)) + [ast.unparse(d) for d in args.defaults]
    params = [
        Param(a.arg, True, i >= len(args.posonlyargs), default)
        for i, (a, default) in enumerate(zip(positional, defaults))
    ]
    params += [
        Param(a.arg, False, True, None if d is None else ast.unparse(d))
        for a, d in zip(args.kwonlyargs, args.kw_defaults)
    ]
    return Signature(tuple(params), args.vararg is not None, args.kwarg is not None)


def bind(call: cst.Call, sig: Signature) -> dict[str, cst.Arg] | None:
    """Each argument of `call` under the name of the parameter it binds to; None when not certain."""
    if any(a.star for a in call.args):
        return None
    positional = [p for p in sig.params if p.positional]
    bound: dict[str, cst.Arg] = {}
    at = 0
    for a in call.args:
        if a.keyword is None:
            if at >= len(positional) and not sig.var_positional:
                return None
            name = positional[at].name if at < len(positional) else f"*{at}"  # one of `*args`
            at += 1
        else:
            name = a.keyword.value
            param = sig.param(name)
            if (param is None and not sig.var_keyword) or (param is not None and not param.keyword):
                return None  # (a keyword the signature does not name goes to its `**kwargs`)
        if name in bound:
            return None
        bound[name] = a
    if any(p.default is None and p.name not in bound for p in sig.params):
        return None
    return bound


def rebuild(
    call: cst.Call,
    old: Signature,
    new: Signature,
    func: str,
    *,
    leading: Sequence[str] = (),
    extra: Sequence[tuple[str, str]] = (),
    same_defaults: Collection[str] = (),
) -> cst.Call | None:
    """`call` (to `old`) as a call of `func` (with `new`): `leading` positional texts first, each
    argument under its parameter, by position where the new signature has it there, then
    the `extra` keywords. None when an argument has no place in `new`, a parameter the call leaves
    to its default has another default in `new` (unless named in `same_defaults`: documented equal,
    such as autocast's dtype None meaning the device's float16), or a required one gets no value."""
    bound = bind(call, old)
    if bound is None:
        return None
    given = set(bound)
    for p in old.params:
        if p.name in given:
            continue
        moved = new.param(p.name)
        if moved is not None and moved.default != p.default and moved.name not in same_defaults:
            return None
    args: list[cst.Arg] = [cst.Arg(cst.parse_expression(text), comma=_COMMA) for text in leading]
    keywords = False
    for a in call.args:
        name = next(n for n, bound_arg in bound.items() if bound_arg is a)
        if name.startswith("*"):  # one of the old `*args`: the new signature's `*args` takes it in place
            if not new.var_positional or keywords:
                return None
            args.append(a)
            continue
        target = new.param(name)
        if target is None:
            return None
        if a.keyword is None and not keywords and new.positional_index(target.name) == len(args):
            args.append(a)
            continue
        if not target.keyword:
            return None
        keywords = True
        args.append(a.with_changes(keyword=cst.Name(target.name), equal=a.equal if a.keyword else NO_SPACE))
    names = {n for n in bound if not n.startswith("*")}
    for name, text in extra:
        if name not in names:
            if args and not isinstance(args[-1].comma, cst.Comma):
                args[-1] = args[-1].with_changes(comma=_COMMA)
            args.append(cst.Arg(cst.parse_expression(text), keyword=cst.Name(name), equal=NO_SPACE))
            names.add(name)
    if args and not call.args and not extra:  # only the leading arguments: no comma after the last
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    given_new = {new.params[i].name for i in range(len(leading))} | names
    if any(p.default is None and p.name not in given_new for p in new.params):
        return None
    return call.with_changes(func=cst.parse_expression(func), args=args)
