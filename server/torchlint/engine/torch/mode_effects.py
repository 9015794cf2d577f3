"""What a function's code does to the train/eval mode of the modules it is handed, read from its `ast` tree.

A comment or a string that mentions `.eval()` switches nothing, and `other.eval()` leaves `model` alone: the
facts are the calls of the function's tree (nested defs and lambdas included: they may run), each with the
name its receiver starts from — `.eval()`, `.train(...)`, `.apply(...)` switch modes, `.backward()` /
`.manual_backward()` train — and the calls that hand a value on to another function, whose own facts are read
the same way through the project (a helper that switches what it is given, two or more calls deep). Read once
per function and content: kept with the file's summary.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING

from torchlint.engine.semantic.inference import symbol
from torchlint.engine.semantic.project import ModuleSummary, qualify

if TYPE_CHECKING:
    from torchlint.engine.semantic.project import Project

SWITCHES = frozenset({"eval", "train", "apply"})
BACKWARD = frozenset({"backward", "manual_backward"})
_DEPTH = 8  # helpers followed from one function through the calls that hand a module on
Slot = int | str | None  # where an argument goes: a position, a keyword, or None (`*args` / `**kwargs`: unknown)


@dataclass(frozen=True)
class Switch:
    """A `.eval()` / `.train(...)` / `.apply(...)` call of the function."""

    method: str
    root: str | None  # the name its receiver starts from (`model` of `model.module.eval()`); None: not a name
    to_train: bool  # `.train()` / `.train(True)`: to training mode (anything else may switch it off)


@dataclass(frozen=True)
class Handoff:
    """A call of the function that hands values on: each argument's slot and the name it starts from."""

    call: ast.Call
    args: tuple[tuple[Slot, str], ...]


@dataclass(frozen=True)
class Effects:
    """One function's mode facts."""

    positional: tuple[str, ...]  # its positional parameters, in order
    named: frozenset[str]  # the parameters a call may pass by keyword
    rebound: frozenset[str]  # parameters it assigns (they may hold anything afterwards)
    switches: tuple[Switch, ...]
    backward: bool
    handoffs: tuple[Handoff, ...]

    def parameters(self, slots: list[Slot]) -> frozenset[str] | None:
        """The parameters arguments at `slots` bind (None: cannot tell, `*args` or an unmatched one)."""
        found = set()
        for slot in slots:
            if isinstance(slot, int) and slot < len(self.positional):
                found.add(self.positional[slot])
            elif isinstance(slot, str) and slot in self.named:
                found.add(slot)
            else:
                return None
        return frozenset(found)

    def reaches(self, root: str | None, params: frozenset[str] | None) -> bool:
        """A value starting from `root` may be (part of) what `params` received (None: any parameter): the
        parameter itself, or a name that may alias it (a local, a global, a parameter it reassigns)."""
        if params is None or root is None or root in params or root in self.rebound:
            return True
        return root not in self.named and root not in self.positional


@dataclass(frozen=True)
class Mode:
    """What a function may do to the mode of the modules some of its parameters receive."""

    off: bool = False  # may switch them out of training mode
    on: bool = False  # switches them to training mode
    backward: bool = False  # runs a backward pass

    def __or__(self, other: Mode) -> Mode:
        return Mode(self.off or other.off, self.on or other.on, self.backward or other.backward)


def effects(summary: ModuleSummary, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> Effects:
    """`fn`'s facts (read on the first question, kept with its file's summary)."""
    known = summary.derived.setdefault("mode_effects", {})
    assert isinstance(known, dict)
    found = known.get(id(fn))
    if found is None:
        found = known[id(fn)] = _read(fn)
    assert isinstance(found, Effects)
    return found


def mode(
    project: Project | None,
    summary: ModuleSummary,
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    params: frozenset[str] | None,
    seen: set[tuple[int, frozenset[str] | None]] | None = None,
) -> Mode:
    """What `fn` may do to the modules `params` receive (None: any of its parameters), through the project
    functions it hands them to (at most `_DEPTH` functions in all); a call it cannot resolve is not followed."""
    seen = set() if seen is None else seen
    facts = effects(summary, fn)
    out = Mode(backward=facts.backward)
    for s in facts.switches:
        if facts.reaches(s.root, params):
            out |= Mode(on=True) if s.to_train else Mode(off=True)
    if (id(fn), params) in seen or len(seen) >= _DEPTH:
        return out  # a recursion adds nothing
    seen.add((id(fn), params))
    for handoff in facts.handoffs:
        slots = [slot for slot, root in handoff.args if facts.reaches(root, params)]
        if not slots:
            continue
        callee = function(project, summary, handoff.call.func)
        if callee is not None:
            out |= mode(project, *callee, effects(*callee).parameters(slots), seen)
    return out


def function(
    project: Project | None, summary: ModuleSummary, func: ast.expr
) -> tuple[ModuleSummary, ast.FunctionDef] | None:
    """The plain function (this file's or a project file's) a call of `summary` runs: a name it defines or
    imports (a method of a local value is not looked for among the project's modules)."""
    head = root(func) if isinstance(func, (ast.Name, ast.Attribute)) else None
    if head not in summary.functions and head not in summary.imports:
        return None
    q = qualify(summary, func)
    found = symbol(project, summary, q) if q is not None else None
    fn = found[0].functions.get(found[1]) if found is not None else None
    return (found[0], fn) if found is not None and isinstance(fn, ast.FunctionDef) else None


def root(expr: ast.expr) -> str | None:
    """The name an attribute / subscript chain starts from (`model` of `model.module`, `models` of `models[0]`)."""
    while isinstance(expr, (ast.Attribute, ast.Subscript)):
        expr = expr.value
    return expr.id if isinstance(expr, ast.Name) else None


def _read(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> Effects:
    args = fn.args
    positional = tuple(a.arg for a in (*args.posonlyargs, *args.args))
    named = frozenset(a.arg for a in (*args.args, *args.kwonlyargs))
    params = {*positional, *named}
    switches: list[Switch] = []
    handoffs: list[Handoff] = []
    rebound: set[str] = set()
    backward = False
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id in params:
            rebound.add(node.id)
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in SWITCHES:
            given = [*node.args, *(k.value for k in node.keywords)]
            to_train = func.attr == "train" and (not given or (len(node.args) == 1 and _is_true(node.args[0])))
            switches.append(Switch(func.attr, root(func.value), to_train))
        elif isinstance(func, ast.Attribute) and func.attr in BACKWARD:
            backward = True
        passed = tuple(
            (slot, name)
            for slot, value in _slots(node)
            if (name := root(value.value if isinstance(value, ast.Starred) else value)) is not None
        )
        if passed:
            handoffs.append(Handoff(node, passed))
    return Effects(positional, named, frozenset(rebound), tuple(switches), backward, tuple(handoffs))


def _slots(call: ast.Call) -> list[tuple[Slot, ast.expr]]:
    """Each argument of `call` with where it goes."""
    out: list[tuple[Slot, ast.expr]] = []
    for i, a in enumerate(call.args):
        out.append((None if any(isinstance(b, ast.Starred) for b in call.args[: i + 1]) else i, a))
    out += [(k.arg, k.value) for k in call.keywords]
    return out


def _is_true(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Constant) and expr.value is True
