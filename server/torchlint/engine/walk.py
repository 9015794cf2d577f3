"""Fast tree access: libcst's own visitor costs ~80% of a parse; this costs ~5%.

We walk the dataclass fields that can hold code (skipping whitespace, commas and
parentheses), with an explicit stack so deeply nested code cannot hit Python's
recursion limit.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterator, Sequence

import libcst as cst

_SKIP = frozenset(
    {
        "header",
        "footer",
        "leading_lines",
        "lines_after_decorators",
        "lpar",
        "rpar",
        "comma",
        "semicolon",
        "trailing_whitespace",
        "newline",
        "dot",
        "star",
        "colon",
        "equal",
        "whitespace_before_colon",
        "operator",
        "asynchronous",
    }
)
_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields(cls: type) -> tuple[str, ...]:
    names = _FIELDS.get(cls)
    if names is None:
        names = tuple(
            f.name for f in dataclasses.fields(cls) if f.name not in _SKIP and not f.name.startswith("whitespace")
        )
        _FIELDS[cls] = names
    return names


_IS_NODE: dict[type, bool] = {}


def _is_node(t: type) -> bool:
    # isinstance() against libcst's ABC-based CSTNode is slow; cache per type.
    known = _IS_NODE.get(t)
    if known is None:
        known = _IS_NODE[t] = issubclass(t, cst.CSTNode)
    return known


class _Children(threading.local):
    """id(node) -> (node, its children), per thread: analyses walk the same subtrees again and again (the
    traversal, scope building, call indexing, loop events), so each node's children are listed once. The
    node is kept in the entry, so its id cannot be reused while the entry lives; the runner forgets them
    after each file. Per thread, because the server lints on several threads and one lint's end must not
    drop another's entries."""

    def __init__(self) -> None:
        self.known: dict[int, tuple[cst.CSTNode, list[cst.CSTNode]]] = {}


_CHILDREN = _Children()


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """Code-bearing children in source order (the list is shared: do not change it)."""
    cache = _CHILDREN.known
    known = cache.get(id(node))
    if known is not None:
        return known[1]
    out: list[cst.CSTNode] = []
    for name in _fields(type(node)):
        value = getattr(node, name)
        t = type(value)
        if t is tuple or t is list:
            out.extend(v for v in value if _is_node(type(v)))
        elif _is_node(t):
            out.append(value)
    cache[id(node)] = (node, out)
    return out


def forget_children() -> None:
    """Drop this thread's children lists of the last file (they keep its tree alive)."""
    _CHILDREN.known.clear()


# On the stack above a node whose children are all visited: a node no tree contains (compared by identity).
_LEAVE: cst.CSTNode = cst.Pass()


def traverse(
    root: cst.CSTNode,
    enter: Callable[[cst.CSTNode], bool | None],
    leave: Callable[[cst.CSTNode], None],
) -> None:
    """Pre-order walk calling enter (return False to skip children) and leave."""
    stack: list[cst.CSTNode] = [root]
    while stack:
        node = stack.pop()
        if node is _LEAVE:
            leave(stack.pop())
            continue
        if enter(node) is False:
            continue
        stack.append(node)
        stack.append(_LEAVE)
        stack.extend(reversed(children(node)))


# Concrete node classes compared by type: isinstance() against libcst's ABC-based classes runs
# Python code (ABCMeta.__instancecheck__) for every node that is not of the class.
SCOPES = frozenset({cst.FunctionDef, cst.Lambda, cst.ClassDef})


def iter_nodes(root: cst.CSTNode, *, into_functions: bool = True) -> Iterator[cst.CSTNode]:
    """Every node under root (pre-order); optionally not into nested defs/lambdas."""
    stack = list(reversed(children(root)))
    while stack:
        node = stack.pop()
        yield node
        if not into_functions and type(node) in SCOPES:
            continue
        stack.extend(reversed(children(node)))


def block_statements(block: cst.BaseSuite) -> list[cst.BaseStatement]:
    """Statements of an indented block or of a one-line suite (`if x: a; b`)."""
    if isinstance(block, cst.IndentedBlock):
        return list(block.body)
    return [cst.SimpleStatementLine(cst.ensure_type(block, cst.SimpleStatementSuite).body)]


def sub_blocks(stmt: cst.BaseCompoundStatement) -> list[list[cst.BaseStatement]]:
    """The statement lists nested directly in a compound statement."""
    blocks: list[list[cst.BaseStatement]] = []
    if hasattr(stmt, "body") and isinstance(stmt.body, cst.BaseSuite):
        blocks.append(block_statements(stmt.body))
    for handler in getattr(stmt, "handlers", ()):
        blocks.append(block_statements(handler.body))
    for case in getattr(stmt, "cases", ()):
        blocks.append(block_statements(case.body))
    orelse = getattr(stmt, "orelse", None)
    if isinstance(orelse, cst.If):
        blocks.append([orelse])
    elif orelse is not None:
        blocks.append(block_statements(orelse.body))
    final = getattr(stmt, "finalbody", None)
    if final is not None:
        blocks.append(block_statements(final.body))
    return blocks


def iter_statements(body: Sequence[cst.BaseStatement], *, into_functions: bool = False) -> Iterator[cst.BaseStatement]:
    """Every statement in a block, recursing into compound statements."""
    stack = list(reversed(body))
    while stack:
        stmt = stack.pop()
        yield stmt
        if type(stmt) is not cst.SimpleStatementLine and isinstance(stmt, cst.BaseCompoundStatement):
            if not into_functions and (type(stmt) is cst.FunctionDef or type(stmt) is cst.ClassDef):
                continue
            for block in reversed(sub_blocks(stmt)):
                stack.extend(reversed(block))


def small_statements(stmt: cst.BaseStatement) -> Sequence[cst.BaseSmallStatement]:
    return stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ()


def parent_map(root: cst.CSTNode) -> dict[int, cst.CSTNode]:
    """id(child) -> parent for every node under `root`; nested defs and lambdas are kept (their own node has
    its parent) but not entered: what runs in them runs at another time."""
    parents: dict[int, cst.CSTNode] = {}
    stack: list[cst.CSTNode] = [root]
    while stack:
        node = stack.pop()
        for child in children(node):
            parents[id(child)] = node
            if type(child) is not cst.FunctionDef and type(child) is not cst.Lambda:
                stack.append(child)
    return parents
