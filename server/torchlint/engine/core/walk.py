"""Fast tree access: libcst's own visitor costs ~80% of a parse; this costs ~5%.

We walk the dataclass fields that can hold code (skipping whitespace, commas and
parentheses), with an explicit stack so deeply nested code cannot hit Python's
recursion limit.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import threading
import typing
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
    node_type = type(node)
    lister = _LISTERS.get(node_type) or _lister(node_type)
    out = lister(node)
    cache[id(node)] = (node, out)
    return out


# Per node class, a function listing its children, made from the declared types of the fields `_fields`
# keeps: a field declared as text (`Name.value`, a string's quotes) is not read, a field declared as one
# node or as a sequence of nodes is taken as it is, any other (optional, a node or a sentinel) is tested.
# Three to four times faster than reading the fields in a loop, and it runs once for every node of every file.
_LISTERS: dict[type, Callable[[cst.CSTNode], list[cst.CSTNode]]] = {}
_TEXT_TYPES = (str, bool, int, float, type(None))


def _never_a_node(hint: object) -> bool:
    if hint in _TEXT_TYPES:
        return True
    origin = typing.get_origin(hint)
    if origin is typing.Literal:
        return all(isinstance(a, _TEXT_TYPES) for a in typing.get_args(hint))
    if origin is typing.Union:
        return all(_never_a_node(a) for a in typing.get_args(hint))
    return False


def _always_a_node(hint: object) -> bool:
    return isinstance(hint, type) and issubclass(hint, cst.CSTNode)


def _nodes_only(hint: object) -> bool:
    """A sequence of nodes (`Sequence[Arg]`, `Sequence[Union[A, B]]`)."""
    if typing.get_origin(hint) is not collections.abc.Sequence:
        return False
    (item,) = typing.get_args(hint)
    items = typing.get_args(item) if typing.get_origin(item) is typing.Union else (item,)
    return all(_always_a_node(i) for i in items)


def _no_children(node: cst.CSTNode) -> list[cst.CSTNode]:
    return []


# Node classes with no code-bearing field (a name, a number, a string): a walk passes them without listing.
LEAVES: set[type] = set()


def _lister(cls: type) -> Callable[[cst.CSTNode], list[cst.CSTNode]]:
    declared = {f.name: f.type for f in dataclasses.fields(cls)}
    lines = ["def list_children(node):", "    out = []"]
    for name in _fields(cls):
        hint = declared.get(name)
        if _never_a_node(hint):
            continue
        if _always_a_node(hint):
            lines.append(f"    out.append(node.{name})")
        elif _nodes_only(hint):
            lines.append(f"    out += node.{name}")
        else:
            lines.append(f"    add(out, node.{name})")
    if len(lines) == 2:  # no field can hold a node
        LEAVES.add(cls)
        _LISTERS[cls] = _no_children
        return _no_children
    lines.append("    return out")
    namespace: dict[str, object] = {"add": _add}
    exec("\n".join(lines), namespace)  # made above from the node class's field names
    lister = typing.cast(Callable[[cst.CSTNode], list[cst.CSTNode]], namespace["list_children"])
    _LISTERS[cls] = lister
    return lister


def _add(out: list[cst.CSTNode], value: object) -> None:
    """A field whose declared type does not say: a node, a sequence of nodes, or neither (None, a sentinel)."""
    t = type(value)
    if t is tuple or t is list:
        out.extend(v for v in typing.cast(Sequence[cst.CSTNode], value) if _is_node(type(v)))
    elif _is_node(t):
        out.append(typing.cast(cst.CSTNode, value))


def list_children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """`children` for a node not listed yet (`listed_children()` has no entry for it)."""
    node_type = type(node)
    out = (_LISTERS.get(node_type) or _lister(node_type))(node)
    _CHILDREN.known[id(node)] = (node, out)
    return out


def listed_children() -> dict[int, tuple[cst.CSTNode, list[cst.CSTNode]]]:
    """This thread's children lists so far, id(node) -> (node, its children): a walk over every node reads
    them directly (a list it does not find there, `children` makes)."""
    return _CHILDREN.known


def forget_children() -> None:
    """Drop this thread's children lists of the last file (they keep its tree alive)."""
    _CHILDREN.known.clear()


# On the stack above a node whose children are all visited: a node no tree contains (compared by identity).
_LEAVE: cst.CSTNode = cst.Pass()


def dispatch(
    root: cst.CSTNode,
    enter: Callable[[cst.CSTNode], object],
    leave: Callable[[cst.CSTNode], None],
    entered: frozenset[type[cst.CSTNode]],
    left: frozenset[type[cst.CSTNode]],
) -> None:
    """Pre-order walk for a visitor that wants few node types: `enter` is called only for the nodes whose
    type is in `entered`, `leave` (after their children) only for those in `left`. Most nodes (names,
    attributes, arguments) are passed by without a call."""
    cache = _CHILDREN.known
    listers, leaves = _LISTERS, LEAVES
    stack: list[cst.CSTNode] = [root]
    pop, push, extend = stack.pop, stack.append, stack.extend
    while stack:
        node = pop()
        if node is _LEAVE:
            leave(pop())
            continue
        node_type = type(node)
        if node_type in entered:
            enter(node)
        if node_type in left:
            push(node)
            push(_LEAVE)
        if node_type in leaves:
            continue
        key = id(node)
        known = cache.get(key)
        if known is not None:
            kids = known[1]
        else:  # `children`, inline: most nodes are first listed here
            kids = (listers.get(node_type) or _lister(node_type))(node)
            cache[key] = (node, kids)
        if kids:
            extend(reversed(kids))


# Concrete node classes compared by type: isinstance() against libcst's ABC-based classes runs
# Python code (ABCMeta.__instancecheck__) for every node that is not of the class.
SCOPES = frozenset({cst.FunctionDef, cst.Lambda, cst.ClassDef})


def iter_nodes(root: cst.CSTNode, *, into_functions: bool = True) -> Iterator[cst.CSTNode]:
    """Every node under root (pre-order); optionally not into nested defs/lambdas."""
    cache = _CHILDREN.known
    stack = list(reversed(children(root)))
    while stack:
        node = stack.pop()
        yield node
        node_type = type(node)
        if node_type in LEAVES or (not into_functions and node_type in SCOPES):
            continue
        known = cache.get(id(node))
        stack.extend(reversed(known[1] if known is not None else list_children(node)))


# isinstance() against a libcst class that is not the object's own runs ABCMeta's Python-level check: these
# helpers, asked for every statement, compare types (the classes named have no subclasses).
_SUITES = (cst.IndentedBlock, cst.SimpleStatementSuite)


def block_statements(block: cst.BaseSuite) -> list[cst.BaseStatement]:
    """Statements of an indented block or of a one-line suite (`if x: a; b`)."""
    if type(block) is cst.IndentedBlock:
        return list(block.body)
    return [cst.SimpleStatementLine(cst.ensure_type(block, cst.SimpleStatementSuite).body)]


def sub_blocks(stmt: cst.BaseCompoundStatement) -> list[list[cst.BaseStatement]]:
    """The statement lists nested directly in a compound statement."""
    blocks: list[list[cst.BaseStatement]] = []
    body = getattr(stmt, "body", None)
    if type(body) in _SUITES:
        blocks.append(block_statements(typing.cast(cst.BaseSuite, body)))
    for handler in getattr(stmt, "handlers", ()):
        blocks.append(block_statements(handler.body))
    for case in getattr(stmt, "cases", ()):
        blocks.append(block_statements(case.body))
    orelse = getattr(stmt, "orelse", None)
    if type(orelse) is cst.If:
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
        if type(stmt) is not cst.SimpleStatementLine and _is_compound(type(stmt)):
            if not into_functions and (type(stmt) is cst.FunctionDef or type(stmt) is cst.ClassDef):
                continue
            for block in reversed(sub_blocks(typing.cast(cst.BaseCompoundStatement, stmt))):
                stack.extend(reversed(block))


def small_statements(stmt: cst.BaseStatement) -> Sequence[cst.BaseSmallStatement]:
    return stmt.body if type(stmt) is cst.SimpleStatementLine else ()


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


_COMPOUND: dict[type, bool] = {}


def _is_compound(t: type) -> bool:
    known = _COMPOUND.get(t)
    if known is None:
        known = _COMPOUND[t] = issubclass(t, cst.BaseCompoundStatement)
    return known
