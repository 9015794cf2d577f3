"""Synthetic spellings of the rules' INVALID examples: the same calls with their arguments by keyword
(where the migration data knows the signature), with a trailing comma, with a comment and a line
break after every argument, and with `*args` / `**kwargs` added. A fix that
joins argument texts by hand breaks on exactly these."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import libcst as cst

from torchlint.engine.core.call_binding import Signature, bind, signature
from torchlint.rules.legacy._signatures import TORCH

_NO_SPACE = cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))
_NOTE = cst.ParenthesizedWhitespace(
    first_line=cst.TrailingWhitespace(whitespace=cst.SimpleWhitespace("  "), comment=cst.Comment("# note")),
    indent=True,
    last_line=cst.SimpleWhitespace("    "),
)


def _trailing_comma(call: cst.Call) -> cst.Call:
    args = list(call.args)
    args[-1] = args[-1].with_changes(comma=cst.Comma())
    return call.with_changes(args=args)


def _commented_lines(call: cst.Call) -> cst.Call:
    args = [a.with_changes(comma=cst.Comma(whitespace_after=_NOTE)) for a in call.args]
    return call.with_changes(args=args, whitespace_before_args=_NOTE)


def _star_args(call: cst.Call) -> cst.Call:
    positional = [a for a in call.args if a.keyword is None and not a.star]
    at = len(positional)
    star = cst.Arg(cst.Name("rest"), star="*")
    args = list(call.args)
    if at == len(args):
        return _with_last(call, star)
    args.insert(at, star.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))))
    return call.with_changes(args=args)


def _star_kwargs(call: cst.Call) -> cst.Call:
    return _with_last(call, cst.Arg(cst.Name("extra"), star="**"))


def _with_last(call: cst.Call, arg: cst.Arg) -> cst.Call:
    args = list(call.args)
    if args:
        args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    return call.with_changes(args=[*args, arg])


def _by_keyword(call: cst.Call) -> cst.Call:
    """Every argument of a call whose signature the migration data knows passed by keyword."""
    sig = _known_signature(call)
    bound = bind(call, sig) if sig is not None else None
    if sig is None or bound is None:
        return call
    names = {id(a): n for n, a in bound.items()}
    args = []
    for a in call.args:
        param = sig.param(names[id(a)])
        if a.keyword is None and param is not None and param.keyword:
            a = a.with_changes(keyword=cst.Name(param.name), equal=_NO_SPACE)
        args.append(a)
    return call.with_changes(args=args)


def _known_signature(call: cst.Call) -> Signature | None:
    """The signature of the data entry whose name ends like the call's (`F.upsample`: `...upsample`)."""
    func = call.func
    last = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
    found = [text for name, text in TORCH.items() if name.rpartition(".")[2] == last]
    return signature(found[0]) if len(found) == 1 else None


CHANGES: dict[str, Callable[[cst.Call], cst.Call]] = {
    "by-keyword": _by_keyword,
    "trailing-comma": _trailing_comma,
    "commented-lines": _commented_lines,
    "star-args": _star_args,
    "star-kwargs": _star_kwargs,
}


class _EveryCall(cst.CSTTransformer):
    def __init__(self, change: Callable[[cst.Call], cst.Call]) -> None:
        self.change = change

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        return self.change(updated) if updated.args else updated


def variants(source: str) -> Iterator[tuple[str, str]]:
    """(name, text) of each synthetic spelling of `source` that differs from it and still parses."""
    module = cst.parse_module(source)
    for name, change in CHANGES.items():
        text = module.visit(_EveryCall(change)).code
        try:
            compile(text, name, "exec")
        except SyntaxError:  # `sum(x for x in y,)`: a bare generator takes no second argument
            continue
        if text != source:
            yield name, text
