"""The statements of a body in source order, each with where it sits.

Every analysis that reads a body in order (the loop events of the TL1xx ordering rules, graph_flow's
def-use chains) walks it through `statements`, so they agree on what a branch is: an `if`/`else`
arm, an `except` handler, a `try`'s `else`, a loop body or its `else`, a `match` case. A `finally`
and a `with` body run whenever their statement does, so they add no branch.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import NamedTuple

import libcst as cst

from torchlint.engine.core.walk import block_statements

Loop = cst.For | cst.While
# (statement, arm) pairs from a body down to a point: which `if`/`else` arm, `except`
# handler, loop body or `match` case (by index) leads there.
BranchPath = tuple[tuple[cst.BaseCompoundStatement, str | int], ...]


class Place(NamedTuple):  # a tuple: one is made for every block walked
    """Where a statement sits, relative to the statements the walk started from."""

    path: BranchPath = ()
    loops: tuple[Loop, ...] = ()  # enclosing loops, outermost first
    withs: tuple[cst.With, ...] = ()  # enclosing `with` statements, outermost first
    alone: bool = False  # the only statement of its block


_TOP = Place()


def statements(
    stmts: Sequence[cst.BaseStatement], place: Place = _TOP, alone: bool | None = None
) -> Iterator[tuple[cst.BaseStatement, Place]]:
    """Each statement (definitions excepted) before the statements nested in it. `alone` overrides
    whether the first block counts as a block of one statement."""
    single = len(stmts) == 1 if alone is None else alone
    here = place if place.alone == single else Place(place.path, place.loops, place.withs, single)
    for stmt in stmts:
        kind = type(stmt)
        if kind is cst.SimpleStatementLine:
            yield stmt, here
        elif kind is not cst.FunctionDef and kind is not cst.ClassDef:
            yield stmt, here
            yield from _nested(stmt, here)


def _nested(stmt: cst.BaseStatement, place: Place) -> Iterator[tuple[cst.BaseStatement, Place]]:
    path, loops, withs = place.path, place.loops, place.withs
    if isinstance(stmt, (cst.For, cst.While)):
        yield from statements(block_statements(stmt.body), Place(path + ((stmt, "body"),), loops + (stmt,), withs))
        if stmt.orelse is not None:
            yield from statements(block_statements(stmt.orelse.body), Place(path + ((stmt, "else"),), loops, withs))
    elif isinstance(stmt, cst.If):
        yield from statements(block_statements(stmt.body), Place(path + ((stmt, "if"),), loops, withs))
        if stmt.orelse is not None:
            branch = [stmt.orelse] if isinstance(stmt.orelse, cst.If) else block_statements(stmt.orelse.body)
            yield from statements(branch, Place(path + ((stmt, "else"),), loops, withs))
    elif isinstance(stmt, cst.With):
        yield from statements(block_statements(stmt.body), Place(path, loops, withs + (stmt,)))
    elif isinstance(stmt, cst.Try):
        yield from statements(block_statements(stmt.body), place)
        for handler in stmt.handlers:
            yield from statements(block_statements(handler.body), Place(path + ((stmt, "except"),), loops, withs))
        if stmt.orelse is not None:
            yield from statements(block_statements(stmt.orelse.body), Place(path + ((stmt, "else"),), loops, withs))
        if stmt.finalbody is not None:
            yield from statements(block_statements(stmt.finalbody.body), place)
    elif isinstance(stmt, cst.Match):
        for i, case in enumerate(stmt.cases):
            yield from statements(block_statements(case.body), Place(path + ((stmt, i),), loops, withs))


def headers(stmt: cst.BaseStatement) -> list[cst.BaseExpression]:
    """The expressions a compound statement evaluates before its blocks: a loop's iterable or
    condition, an `if` test, `with` items."""
    if isinstance(stmt, cst.For):
        return [stmt.iter]
    if isinstance(stmt, (cst.While, cst.If)):
        return [stmt.test]
    if isinstance(stmt, cst.With):
        return [item.item for item in stmt.items]
    return []
