"""Every call of the file and where it sits: one walk, shared by the analyses that ask.

Call-graph questions come from several analyses: what a parameter is (every call site of its
function, semantics.py), which call built a value (values.py), which functions run only with
autograd off (no_grad_callers.py), which ones a training loop calls, which losses an activation
feeds. Each used to walk the whole file for its own index — five walks of every node; this is
one, made on the first question and kept on the FileContext.

A top-level statement's calls depend on nothing outside it, so the index is made statement by
statement. The language server's incremental parser hands back the same statement objects for what
an edit left alone and keeps their parts of the index (`Parts`), so only the edited statement is
walked again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple, cast

import libcst as cst

from torchlint.engine.core.walk import (
    LEAVES,
    children,
    iter_statements,
    list_children,
    listed_children,
    small_statements,
)

Key = tuple[str, str]  # ("name", f) for `f(...)`, ("self", m) for `self.m(...)`, ("attr", m) for `x.m(...)`
Chain = tuple[cst.CSTNode, ...]  # the enclosing FunctionDef / ClassDef nodes, outermost first


class CallSite(NamedTuple):  # a tuple: made for every call of every file, and a frozen dataclass costs 3x
    call: cst.Call
    chain: Chain  # a call in a def's decorators, parameters or annotations is in that def
    withs: tuple[cst.With, ...]  # the `with` blocks around it inside its own function or class body
    in_loop: bool  # in the body of a for/while loop of its own function (not through a def or lambda)
    in_lambda: bool
    header: bool  # in the decorators, parameters or annotations of a def, or a class's bases

    @property
    def function(self) -> cst.FunctionDef | None:
        """The innermost function around the call (None at module level or in a class body)."""
        last = self.chain[-1] if self.chain else None
        return last if type(last) is cst.FunctionDef else None


@dataclass
class CallSites:
    calls: list[CallSite] = field(default_factory=list)  # in source order (pre-order)
    by_key: dict[Key, list[CallSite]] = field(default_factory=dict)
    functions: dict[str, list[tuple[cst.FunctionDef, Chain]]] = field(default_factory=dict)  # chain: around it
    assigns: list[cst.Assign] = field(default_factory=list)
    # names, `self.x` and other attributes (`x.m`: ("attr", m)) read without being called, outside lambdas and
    # def / class headers
    referenced: set[Key] = field(default_factory=set)
    # id of a module-level call or top-level def -> the index of its top-level statement (notebook cells
    # are one module in order); a def that is itself a top-level statement always rebinds its name
    top_order: dict[int, int] = field(default_factory=dict)
    top_defs: dict[str, list[int]] = field(default_factory=dict)

    def calls_of(self, fn: cst.FunctionDef) -> list[CallSite]:
        """The calls by name that can run `fn`: a module-level call after a later top-level `def` of the same
        name runs that one. Calls inside functions run whichever def is bound when they run: all kept."""
        sites = self.by_key.get(("name", fn.name.value), [])
        at = self.top_order.get(id(fn))
        later = [i for i in self.top_defs.get(fn.name.value, ()) if at is not None and i > at]
        if not later:
            return sites
        return [s for s in sites if s.chain or not any(i < self.top_order[id(s.call)] for i in later)]


def key(func: cst.BaseExpression) -> Key | None:
    if type(func) is cst.Name:
        return ("name", func.value)
    if type(func) is cst.Attribute:
        value = func.value
        return ("self" if type(value) is cst.Name and value.value == "self" else "attr", func.attr.value)
    return None


_State = tuple[Chain, tuple[cst.With, ...], bool, bool, bool]  # chain, withs, in_loop, in_lambda, header


# id(statement) -> (the statement, its part of the index). The statement is kept in the entry, so its
# id cannot be reused by another node while the entry lives.
Parts = dict[int, tuple[cst.CSTNode, CallSites]]


def index(module: cst.Module, reuse: Parts | None = None) -> CallSites:
    """Every call of the module, from the parts of its top-level statements. `reuse`: the parts of the
    last module indexed with it, replaced by this module's."""
    known_parts = reuse or {}
    parts: Parts = {}
    out = CallSites()
    for i, stmt in enumerate(children(module)):
        known = known_parts.get(id(stmt))
        part = known[1] if known is not None else _index(stmt)
        parts[id(stmt)] = (stmt, part)
        if type(stmt) is cst.FunctionDef:
            out.top_defs.setdefault(stmt.name.value, []).append(i)
        for site in part.calls:
            if not site.chain:
                out.top_order[id(site.call)] = i
        for found in part.functions.values():
            out.top_order.update((id(f), i) for f, chain in found if not chain)
        out.calls += part.calls
        for k, sites in part.by_key.items():
            out.by_key.setdefault(k, []).extend(sites)
        for name, found in part.functions.items():
            out.functions.setdefault(name, []).extend(found)
        out.assigns += part.assigns
        out.referenced |= part.referenced
    if reuse is not None:
        reuse.clear()
        reuse.update(parts)
    return out


def _index(root: cst.CSTNode) -> CallSites:
    """Walk one top-level statement (explicit stack: deep nesting cannot hit the recursion limit)."""
    out = CallSites()
    called: set[int] = set()  # ids of call targets: a called name is not a mere reference
    referenced, calls, by_key = out.referenced, out.calls, out.by_key
    # two stacks in step, the nodes and the state each is walked in: most nodes share their parent's state
    nodes: list[cst.CSTNode] = [root]
    states: list[_State] = [((), (), False, False, False)]
    pop_node, pop_state, push_nodes, push_states = nodes.pop, states.pop, nodes.extend, states.extend
    listed = listed_children()  # `children`'s lists, read here directly: this visits every node
    leaves = LEAVES
    while nodes:
        node, state = pop_node(), pop_state()
        node_type = type(node)  # compared by type, most frequent first: isinstance() on libcst's ABCs is slow
        if node_type is cst.Name:
            if not state[3] and not state[4] and id(node) not in called:
                referenced.add(("name", cast(cst.Name, node).value))
            continue
        if node_type is cst.Attribute:
            attribute = cast(cst.Attribute, node)
            value = attribute.value
            if not state[3] and not state[4] and id(node) not in called:
                own = type(value) is cst.Name and value.value == "self"
                referenced.add(("self" if own else "attr", attribute.attr.value))
            nodes.append(value)  # its `.attr` is a field name, not a reference
            states.append(state)
            continue
        if node_type in leaves or node_type is cst.Import or node_type is cst.ImportFrom:
            continue  # a number or a string holds nothing; an import binds names, calls and reads nothing
        known = listed.get(id(node))
        kids = known[1] if known is not None else list_children(node)
        if node_type is cst.Call:
            call = cast(cst.Call, node)
            site = CallSite(call, *state)
            calls.append(site)
            k = key(call.func)
            if k is not None:
                by_key.setdefault(k, []).append(site)
                called.add(id(call.func))
        elif node_type is cst.Assign:
            out.assigns.append(cast(cst.Assign, node))
        elif node_type is cst.FunctionDef or node_type is cst.ClassDef:
            chain, _, in_loop, in_lambda, header = state
            definition = cast("cst.FunctionDef | cst.ClassDef", node)
            inner = (*chain, definition)
            body = definition.body
            if node_type is cst.FunctionDef:
                out.functions.setdefault(definition.name.value, []).append((cast(cst.FunctionDef, node), chain))
                loop = False
            else:
                loop = in_loop  # a class body in a loop runs in the loop
            for child in reversed(kids):
                nodes.append(child)
                states.append((inner, (), loop, in_lambda, header or child is not body))
            continue
        elif node_type is cst.Lambda:
            chain, withs, _, _, header = state
            push_nodes(reversed(kids))
            push_states([(chain, withs, False, True, header)] * len(kids))
            continue
        elif node_type is cst.For or node_type is cst.While:
            chain, withs, _, in_lambda, header = state
            looping: _State = (chain, withs, True, in_lambda, header)
            body = cast("cst.For | cst.While", node).body
            push_nodes(reversed(kids))
            push_states([looping if child is body else state for child in reversed(kids)])
            continue
        elif node_type is cst.With:
            chain, withs, in_loop, in_lambda, header = state
            inside: _State = (chain, (*withs, cast(cst.With, node)), in_loop, in_lambda, header)
            body = cast(cst.With, node).body
            push_nodes(reversed(kids))
            push_states([inside if child is body else state for child in reversed(kids)])
            continue
        push_nodes(reversed(kids))
        push_states([state] * len(kids))
    return out


def statement_calls(module: cst.Module) -> list[cst.Call]:
    """The calls made as statements of their own (`setup()`), anywhere in the file: run for their effect,
    their value unused. A walk of the statements only, on the first question."""
    found = []
    for stmt in iter_statements(module.body, into_functions=True):
        for small in small_statements(stmt):
            if type(small) is cst.Expr and type(small.value) is cst.Call:
                found.append(small.value)
    return found
