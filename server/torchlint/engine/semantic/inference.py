"""What a project's classes, functions and names are: one inference for every file, the linted one included.

A class's kind (its hierarchy: `class Net(BaseModel)` with `BaseModel(nn.Module)` two files away), what a
function or method returns, what a module global holds and what each name of a function or class body is
bound to are read here, over one representation: each file's `ast` summary (project.ModuleSummary, kept per
content). The file being linted is summarised by the same `summarize` and asked the same questions, so a
class, a function and a global get one kind whichever file asks about them. The kind of an expression is
evaluated here only: the libcst expressions rules ask about (semantics.py) come in their `ast` shape
(as_ast.py), with the summary's scope they sit in.

The rule, the same for every file (kinds from evidence only, never a name):
- a scope's bindings are the union of what each of its binding statements assigns (assignments, annotated
  assignments, `with ... as`, `model, opt = accelerator.prepare(model, opt)`, a `for` over a loader binds
  batches, `x.backward()` makes `x` a loss), flow-insensitive; `global` / `nonlocal` assignments bind the
  declaring scope's owner; `self.x = ...` in any method binds `self.x` for the whole class;
- a parameter is what its annotation or default says, else what every call site IN ITS OWN FILE passes
  (`f(...)` by name; `self.m(...)` inside the class for a method), else unknown: the evidence a file has
  about its own functions. Other files' calls never change a function's answer, so the answer for F of X
  depends on X (and what X imports) only, whichever file asks;
- a function returns the kind every `return` agrees on; a global holds its module-scope binding.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from torchlint.engine.semantic import scopes
from torchlint.engine.semantic.kinds import (
    PASS_THROUGH,
    RETURNS,
    Kind,
    agree,
    builtin_call_kind,
    is_module_base,
    kind_from_annotation,
    kind_from_qualname,
    method_call_kind,
)
from torchlint.engine.semantic.project import ModuleSummary, current_dependencies, qualify
from torchlint.engine.semantic.scopes import (
    COMPREHENSIONS,
    DEF_CLASSES,
    DEF_TYPES,
    FUNCTIONS,
    Chain,
    Comprehension,
    FileScopes,
    Scoped,
    ScopeFacts,
    declarers,
    owner,
)

if TYPE_CHECKING:
    from torchlint.engine.semantic.project import Project

# What a class inherits from a library base: a module, or one of these (a subclass of DataLoader is one).
_INHERITED = Kind.MODEL | Kind.OPTIMIZER | Kind.SCHEDULER | Kind.DATALOADER | Kind.SAMPLER
_MAX_DEPTH = 100  # nested expressions followed (deeper: unknown, before Python's recursion limit)
_MAX_CHAIN = 24  # functions whose returns are being read at once, across files (longer chains: unknown)
_CONTAINERS = (ast.Dict, ast.List, ast.Tuple, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)
Where = Scoped | ast.Lambda | Comprehension  # a scope an expression is evaluated in
Found = tuple[ModuleSummary, str]  # a file's summary and a top-level name it defines


class ClassKinds:
    """The kind of each class of one summarised file (every class, nested ones included), read on first
    question. `memo` keeps answers for as long as the files they came from are unchanged: a lint's own
    for the file being linted, the project's (cleared when any summary changes) for other files."""

    def __init__(
        self, project: Project | None, summary: ModuleSummary, memo: dict[object, Kind], folder: Path | None = None
    ) -> None:
        self.project = project
        self.summary = summary
        self.folder = folder or summary.path.parent  # where its imports resolve (the linted file's, resolved)
        self.memo = memo
        self.by_name = {c.name: c for c in summary.all_classes}  # the last definition of a name wins

    def of(self, cls: ast.ClassDef) -> Kind:
        key = (self.summary.path, id(cls))
        known = self.memo.get(key)
        if known is not None:
            return known
        self.memo[key] = Kind.NONE  # a cycle of bases proves nothing
        kind = Kind.NONE
        for base in cls.bases:
            kind = self._base(base)
            if kind:
                break
        self.memo[key] = kind
        return kind

    def derives_from(self, cls: ast.ClassDef, qualnames: frozenset[str], seen: set[int] | None = None) -> bool:
        """`cls` has one of the library classes `qualnames` among its bases, through project classes of any file
        (the hierarchy `of` reads)."""
        seen = set() if seen is None else seen
        if id(cls) in seen:
            return False
        seen.add(id(cls))
        for base in cls.bases:
            found = self._resolved(base)
            if isinstance(found, str):
                if found in qualnames:
                    return True
            elif found is not None and found[0].derives_from(found[1], qualnames, seen):
                return True
        return False

    def _base(self, base: ast.expr) -> Kind:
        found = self._resolved(base)
        if isinstance(found, str):
            return Kind.MODEL if is_module_base(found) else kind_from_qualname(found) & _INHERITED
        return found[0].of(found[1]) if found is not None else Kind.NONE

    def _resolved(self, base: ast.expr) -> str | tuple[ClassKinds, ast.ClassDef] | None:
        """What a base class expression denotes: a library class's qualified name, a project class (with the
        class kinds of its file), or None (nothing known)."""
        q = imported(self.summary, base)
        if q is None:
            local = self.by_name.get(_dotted(base) or "")
            return (self, local) if local is not None else None
        if is_module_base(q) or kind_from_qualname(q) & _INHERITED or self.project is None:
            return q
        found = self.project.resolve(q, self.folder)
        if found is None or found[1] not in found[0].classes:
            return q
        other, name = found
        return for_file(self.project, other).classes, other.class_defs[name]


# -- the questions other files ask ------------------------------------------------------------------
def for_file(project: Project, summary: ModuleSummary) -> Inference:
    """The inference over a project file's summary: one per file and lint (its bindings are built lazily, and
    a lint's recursion guards are its own), answers about classes kept until a summary changes."""
    known = current_dependencies().inferences
    found = known.get(summary.path)
    if not isinstance(found, Inference) or found.summary is not summary:
        found = known[summary.path] = Inference(project, summary, project.kinds)
    return found


def symbol(project: Project | None, summary: ModuleSummary, q: str, folder: Path | None = None) -> Found | None:
    """The class, function or global `q` names, read in the file of `summary`: one of its own (`q` spelled
    `<module>.<name>`, as project.qualify spells a name the file defines) or a project file's (re-exports
    followed; `folder`: where the file's imports resolve, its own by default). The one resolution the
    inference and the torch analyses share."""
    head, _, last = q.rpartition(".")
    if head == summary.name and (last in summary.classes or last in summary.functions or last in summary.globals):
        return summary, last
    return project.resolve(q, folder or summary.path.parent) if project is not None else None


def call_kind(project: Project, qualname: str, from_dir: Path) -> Kind:
    """Kind of `qualname(...)`: a project class's instance or a project function's result."""
    found = project.resolve(qualname, from_dir)
    if found is None:
        return Kind.NONE
    summary, name = found
    if name in summary.classes:
        return for_file(project, summary).classes.of(summary.class_defs[name])
    if name not in summary.functions:
        return Kind.NONE
    return _kept(project, (summary.path, name), lambda: for_file(project, summary).returns(summary.functions[name]))


def is_module_class(project: Project, qualname: str, from_dir: Path) -> bool:
    """`qualname` names a project class that is an nn.Module subclass."""
    found = project.resolve(qualname, from_dir)
    if found is None or found[1] not in found[0].classes:
        return False
    return bool(for_file(project, found[0]).classes.of(found[0].class_defs[found[1]]) & Kind.MODEL)


def global_kind(project: Project, qualname: str, from_dir: Path) -> Kind:
    """Kind of a module-level variable of a project module (`from config import device`)."""
    found = project.resolve(qualname, from_dir)
    if found is None or found[1] not in found[0].globals:
        return Kind.NONE
    summary, name = found
    return _kept(project, ("global", summary.path, name), lambda: for_file(project, summary).global_kind(name))


def _kept(project: Project, key: object, answer: Callable[[], Kind]) -> Kind:
    """An answer about another file, kept by the project until a summary changes: only one read outside any
    other question (inside a cycle of questions, an answer may lack what the cycle gives)."""
    known = project.kinds.get(key)
    if known is not None:
        return known
    deps = current_dependencies()
    outermost = not deps.inferring
    kind = answer()
    if outermost:
        project.kinds[key] = kind
    return kind


# -- one file's scopes (per content) ------------------------------------------------------------------
@dataclass
class OwnCalls:
    """The calls of one scope's own body (a def's header is its enclosing scope's)."""

    by_key: dict[tuple[str, str], list[tuple[ast.Call, Chain]]] = field(default_factory=dict)
    backward: list[ast.Call] = field(default_factory=list)  # `x.backward(...)` outside lambdas


def facts(summary: ModuleSummary) -> FileScopes:
    """The scopes of a summarised file (scopes.py: made on the first question, kept with the summary)."""
    found = summary.derived.get("scopes")
    if found is None:
        found = summary.derived["scopes"] = scopes.read(summary.tree, summary.text)
    assert isinstance(found, FileScopes)
    return found


def _call_lines(file: FileScopes, name: str) -> set[int]:
    """The lines where the word `name` is followed by `(`: a function not called there has no call site
    here, and one that is has its call sites in the scopes around those lines. Found per name asked (a
    search of the text for the name: ~20x cheaper than listing every called word of it), kept with the file."""
    known = file.derived.setdefault("call_lines", {})
    assert isinstance(known, dict)
    found = known.get(name)
    if found is None:
        text, found = file.text, set()
        at = text.find(name)
        while at >= 0:
            if not (at and _WORD.match(text, at - 1)) and _OPENS_CALL.match(text, at + len(name)):
                found.add(text.count("\n", 0, at) + 1)  # a whole word (not the end of another), then `(`
            at = text.find(name, at + 1)
        known[name] = found
    return found


def calls_of(file: FileScopes, key: tuple[str, str]) -> list[tuple[ast.Call, Chain]]:
    """Every call `f(...)` (key ("name", f)) or `self.m(...)` (("self", m)) of the file, with the defs around
    it: read in the scopes whose lines hold `f(` / `m(` only; kept with the file (each parameter of a
    function asks for its calls)."""
    known = file.derived.setdefault("calls_of", {})
    assert isinstance(known, dict)
    found: list[tuple[ast.Call, Chain]] | None = known.get(key)
    if found is None:
        found = known[key] = []
        for scope in {id(s): s for n in _call_lines(file, key[1]) for s in _scopes_at(file, n)}.values():
            found += calls_in(scope).by_key.get(key, [])
    return found


def _scopes_at(file: FileScopes, line: int) -> list[ScopeFacts]:
    """The scope whose own code holds `line`: the innermost def or class around it, and the one around that
    when the line is the def's header (its decorators' and defaults' calls run there)."""
    lines = _line_scopes(file)
    best = lines[line] if 0 <= line < len(lines) else file.scopes[id(file.module)]
    node = _statements_of(best)
    header = not isinstance(node, ast.Module) and (line < node.body[0].lineno or line == node.lineno)
    return [best, best.parent] if header and best.parent is not None else [best]


def _line_scopes(file: FileScopes) -> list[ScopeFacts]:
    """The innermost def or class around each line (indexed by line number), read once per file: deeper
    scopes written over the ones around them, the first of a depth last."""
    found = file.derived.get("line_scopes")
    if found is None:
        module = file.scopes[id(file.module)]
        found = [module] * (file.text.count("\n") + 2)
        ordered = sorted(enumerate(file.scopes.values()), key=lambda found: (len(found[1].chain), -found[0]))
        for _, scope in ordered:
            node = scope.node
            if not isinstance(node, ast.Module):
                end = (node.end_lineno or 0) + 1
                found[node.lineno : end] = [scope] * (end - node.lineno)
        file.derived["line_scopes"] = found
    assert isinstance(found, list)
    return found


def _statements_of(scope: ScopeFacts) -> Scoped:
    """The module, def or class of a scope of statements (inference reads no other)."""
    node = scope.node
    assert isinstance(node, (ast.Module, *DEF_CLASSES)), "a scope of statements"
    return node


# Fields of a node class that may hold nodes worth visiting (not `ctx`, operators or comparison operators).
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}
_LEAVES = frozenset({ast.Name, ast.Constant, ast.Pass, ast.Break, ast.Continue, ast.alias})
_WORD = re.compile(r"\w")
_OPENS_CALL = re.compile(r"\s*\(")


def _children(node: ast.AST) -> list[ast.AST]:
    """The child nodes of `node` in source order (ast.iter_child_nodes without its per-field generators: the
    call index visits every node of a file)."""
    t = type(node)
    fields = _CHILD_FIELDS.get(t)
    if fields is None:
        fields = _CHILD_FIELDS[t] = tuple(f for f in t._fields if f not in ("ctx", "op", "ops"))
    kids: list[ast.AST] = []
    for f in fields:
        value = getattr(node, f, None)
        if type(value) is list:
            kids.extend(v for v in value if isinstance(v, ast.AST))
        elif isinstance(value, ast.AST):
            kids.append(value)
    return kids


def calls_in(scope: ScopeFacts) -> OwnCalls:
    """The calls of a scope's own body, by name or through `self`, and its `x.backward(...)` calls."""
    known = scope.derived.get("calls")
    if known is not None:
        assert isinstance(known, OwnCalls)
        return known
    out = OwnCalls()
    todo: list[tuple[ast.AST, bool]] = [(s, False) for s in reversed(_statements_of(scope).body)]
    while todo:
        node, in_lambda = todo.pop()
        t = type(node)  # compared by type, most frequent first: this visits every node of the scope
        if t in _LEAVES:
            continue
        if t is ast.Call:
            _index_call(out, scope, node, in_lambda)  # type: ignore[arg-type]
        elif t in DEF_TYPES:  # only its header runs here
            body = node.body  # type: ignore[attr-defined]
            todo.extend((c, in_lambda) for c in reversed(_children(node)) if not any(c is b for b in body))
            continue
        elif t is ast.Lambda:
            in_lambda = True
        todo.extend((child, in_lambda) for child in reversed(_children(node)))
    scope.derived["calls"] = out
    return out


def _index_call(out: OwnCalls, scope: ScopeFacts, call: ast.Call, in_lambda: bool) -> None:
    """A call by name or through `self` (its function's parameters' call sites), and `x.backward(...)`."""
    func = call.func
    key = ("name", func.id) if isinstance(func, ast.Name) else None
    if isinstance(func, ast.Attribute):
        if isinstance(func.value, ast.Name) and func.value.id == "self":
            key = ("self", func.attr)
        if func.attr in ("backward", "manual_backward") and not in_lambda:
            out.backward.append(call)
    if key is not None:
        out.by_key.setdefault(key, []).append((call, scope.chain))


# -- the inference over one file ---------------------------------------------------------------------
class Inference:
    """What the names, functions and globals of one summarised file are (the rule: see the module's text).
    Bindings are read scope by scope on the first question about each."""

    def __init__(
        self, project: Project | None, summary: ModuleSummary, memo: dict[object, Kind], folder: Path | None = None
    ) -> None:
        self.project = project
        self.summary = summary
        self.folder = folder or summary.path.parent  # where its imports resolve
        self.facts = facts(summary)
        self.classes = ClassKinds(project, summary, memo, folder)
        self._module = self.facts.scopes[id(self.facts.module)]
        self._bindings: dict[int, dict[str, Kind]] = {}
        self._pending: dict[int, dict[str, ast.arg]] = {}
        self._exported: dict[int, dict[str, Kind]] = {}  # names assigned under `global` / `nonlocal`
        self._returns: dict[int, Kind] = {}
        self._resolving: set[int] = set()  # functions whose returns are being read
        self._passing: set[int] = set()  # functions whose parameters' call sites are being read
        self._building = 0  # scopes whose bindings are being read (until done, a read of them sees a part)
        self._expressions: dict[int, ScopeFacts] | None = None  # id(lambda or comprehension) -> its scope

    # -- answers ---------------------------------------------------------------------------------
    def returns(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> Kind:
        """The kind every `return` of `fn` agrees on (NONE when they differ or none returns a value)."""
        known = self._returns.get(id(fn))
        if known is not None:
            return known
        deps = current_dependencies()
        if id(fn) in self._resolving or deps.inferring >= _MAX_CHAIN:
            return Kind.NONE  # recursion proves nothing; nor does a chain of calls too long to follow
        self._resolving.add(id(fn))
        deps.inferring += 1
        try:
            values = [s.value for s in own_statements(fn.body) if isinstance(s, ast.Return) and s.value is not None]
            kind = agree([self.infer(v, fn) for v in values])
        finally:
            self._resolving.discard(id(fn))
            deps.inferring -= 1
        if not self._resolving and not self._building:  # read inside a cycle or from a part: not kept
            self._returns[id(fn)] = kind
        return kind

    def global_kind(self, name: str) -> Kind:
        """What module-level `name` holds (its module-scope binding)."""
        return self.binding(self.facts.module, name) or Kind.NONE

    def bindings(self, node: Where) -> dict[str, Kind]:
        """The kinds of the names scope `node` binds (`self.x` for a class), parameters resolved so far (a
        lambda's parameters: none known)."""
        known = self._bindings.get(id(node))
        if known is None:
            known = self._bindings[id(node)] = {}
            self._building += 1
            try:
                if isinstance(node, COMPREHENSIONS):
                    self._bind_comprehension(node, self._scope(node))
                elif not isinstance(node, ast.Lambda):
                    self._build(self._scope(node))
            finally:
                self._building -= 1
        return known

    def _scope(self, node: Where) -> ScopeFacts:
        """The facts of a scope of this file's summary (a lambda's or comprehension's read on the first one)."""
        found = self.facts.scopes.get(id(node))
        if found is None:
            if self._expressions is None:
                self._expressions = {id(s.node): s for s in self.facts.expression_scopes()}
            found = self._expressions[id(node)]
        return found

    def binding(self, node: Where, name: str) -> Kind | None:
        """Kind of `name` as scope `node` binds it: NONE when it binds it in a way no kind is known of; None
        when the binding is an import, `def` or `class` (known by name), or the scope does not bind it."""
        bindings = self.bindings(node)
        param = self._pending.get(id(node), {}).pop(name, None)
        if param is not None:
            assert isinstance(node, FUNCTIONS), "only functions have parameters"
            self._bind(node, name, self._param_kind(node, param))
        kind = bindings.get(name)
        if kind is not None:
            return kind
        scope = self._scope(node)
        return None if name in scope.definitions or name not in scope.local else Kind.NONE

    def lookup(self, name: str, node: Where) -> Kind | None:
        """Kind of `name` read in scope `node` (None: a builtin, or known by name)."""
        found = owner(self._scope(node), name, self._module)
        return self.binding(found.node, name) if found is not None else None

    def infer(self, expr: ast.expr, node: Where, depth: int = 0) -> Kind:
        """Kind of the value of `expr` evaluated in scope `node`."""
        if depth > _MAX_DEPTH:
            return Kind.NONE
        if isinstance(expr, ast.Name):
            kind = self.lookup(expr.id, node)
            if kind is not None:
                return kind
            q = imported(self.summary, expr)
            if q is not None and self.project is not None:
                return global_kind(self.project, q, self.folder)  # `from config import device`
            return Kind.NONE
        if isinstance(expr, ast.Attribute):
            if _is_self(expr.value):
                cls = self._class_of(node)
                return self.bindings(cls).get("self." + expr.attr, Kind.NONE) if cls is not None else Kind.NONE
            if expr.attr == "module":  # ddp_model.module -> the bare model
                return self.infer(expr.value, node, depth + 1) & Kind.MODEL
            if expr.attr == "loss" and self.infer(expr.value, node, depth + 1) & Kind.TENSOR:
                return Kind.LOSS  # `model(**batch).loss` (Hugging Face outputs)
            return Kind.NONE
        if isinstance(expr, ast.Call):
            return self._call(expr, node, depth + 1)
        if isinstance(expr, ast.BinOp):
            both = self.infer(expr.left, node, depth + 1) | self.infer(expr.right, node, depth + 1)
            if both & Kind.LOSS:
                return Kind.LOSS
            if both & Kind.TENSOR:
                return Kind.TENSOR
            return Kind.NUMBER if both & Kind.NUMBER else Kind.NONE
        if isinstance(expr, ast.Constant):
            number = isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool)
            return Kind.NUMBER if number else Kind.NONE
        if isinstance(expr, _CONTAINERS):
            return Kind.CONTAINER
        if isinstance(expr, ast.Subscript):
            return self.infer(expr.value, node, depth + 1) & (Kind.TENSOR | Kind.BATCH)
        return Kind.NONE

    def definition(self, index: int) -> ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | None:
        """The `index`-th def or class of the file in source order (how semantics.py maps its libcst tree's)."""
        defs = self.facts.definitions
        return defs[index] if 0 <= index < len(defs) else None

    def method_returns(self, method: str, cls: ast.ClassDef) -> Kind | None:
        """What `self.method(...)` returns inside class `cls` (None: the class defines no such method)."""
        for fn, chain in self.facts.functions.get(method, ()):
            if chain and chain[-1] is cls:
                return self.returns(fn)
        return None

    def local_callable(self, name: str) -> Kind | None:
        """`Net(...)` / `build_model(...)` for a class or the one function of that name this file defines."""
        cls = self.classes.by_name.get(name)
        if cls is not None:
            return self.classes.of(cls)
        defs = self.facts.functions.get(name)
        if defs and len(defs) == 1:
            return self.returns(defs[0][0])
        return None

    # -- elements -----------------------------------------------------------------------------
    def element_kind(self, expr: ast.expr, node: Where) -> Kind:
        """Kind shared by every element of a list, tuple, comprehension (one of this file's summary) or list
        variable, else NONE."""
        if isinstance(expr, (ast.GeneratorExp, ast.ListComp)):
            return self.infer(expr.elt, expr) if expr.generators else Kind.NONE
        if isinstance(expr, (ast.List, ast.Tuple)):
            return _common([self.infer(e, node) for e in expr.elts if not isinstance(e, ast.Starred)])
        if isinstance(expr, ast.Name):
            return self._list_elements(expr.id, node)
        return Kind.NONE

    def _list_elements(self, name: str, node: Where) -> Kind:
        """`xs = []` then `xs.append(v)` / `xs = [v for ...]` in scope `node`: the kind of every v, if all agree."""
        kinds = []
        todo: list[ast.AST] = list(reversed(node.body)) if isinstance(node, (ast.Module, *DEF_CLASSES)) else [node]
        while todo:
            n = todo.pop()
            t = type(n)
            if t is ast.Assign:
                assign: ast.Assign = n  # type: ignore[assignment]
                if any(isinstance(target, ast.Name) and target.id == name for target in assign.targets):
                    value = assign.value
                    if not isinstance(value, (ast.List, ast.ListComp)) or len(assign.targets) != 1:
                        return Kind.NONE
                    if isinstance(value, ast.ListComp) or value.elts:
                        kinds.append(self.element_kind(value, node))
            elif t is ast.Call:
                func = n.func  # type: ignore[attr-defined]
                if (
                    isinstance(func, ast.Attribute)
                    and isinstance(func.value, ast.Name)
                    and func.value.id == name
                    and func.attr in ("append", "extend", "insert")
                ):
                    args: list[ast.expr] = [*n.args, *(k.value for k in n.keywords)]  # type: ignore[attr-defined]
                    if func.attr != "append" or len(args) != 1:
                        return Kind.NONE
                    kinds.append(self.infer(args[0], node))
            elif t in DEF_TYPES or t is ast.Lambda:
                continue  # its own scope
            todo.extend(reversed(_children(n)))
        return _common(kinds)

    def _bind_comprehension(self, comp: Comprehension, scope: ScopeFacts) -> None:
        """A comprehension's targets: the elements of what each clause iterates (a model's `.parameters()`
        are tensors); the first iterable is read in the scope around it, as Python does."""
        assert scope.parent is not None, "a comprehension sits in a scope"
        outer = scope.parent.node
        for i, clause in enumerate(comp.generators):
            it = clause.iter
            where = outer if i == 0 else comp
            if isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and it.func.attr == "parameters":
                kind = Kind.TENSOR if self.infer(it.func.value, where) & Kind.MODEL else Kind.NONE
            else:
                kind = self.element_kind(it, where)
            targets = clause.target.elts if isinstance(clause.target, (ast.Tuple, ast.List)) else [clause.target]
            for target in targets:
                target = target.value if isinstance(target, ast.Starred) else target  # `*rest` too
                if isinstance(target, ast.Name):
                    self._bind(comp, target.id, kind)

    # -- calls --------------------------------------------------------------------------------
    def _call(self, call: ast.Call, node: Where, depth: int) -> Kind:
        func = call.func
        q = imported(self.summary, func)
        if q is not None:
            if q in PASS_THROUGH and call.args:
                return self.infer(call.args[0], node, depth)
            kind = kind_from_qualname(q)
            if kind or q in RETURNS:  # a table entry of NONE: deliberately unknown
                return kind
            if self.project is not None:
                kind = call_kind(self.project, q, self.folder)
                if kind:
                    return kind
        if isinstance(func, ast.Name):
            if self.lookup(func.id, node) is None:  # not a variable holding something callable
                local = self.local_callable(func.id)
                if local is not None:
                    return local
            builtin = builtin_call_kind(func.id)
            if builtin:
                return builtin
        if isinstance(func, ast.Attribute):
            receiver = self.infer(func.value, node, depth)
            result = method_call_kind(func.attr, receiver)
            if result is not None:
                return result
            if func.attr in ("prepare", "setup") and call.args and receiver & Kind.ACCELERATOR:
                return self.infer(call.args[0], node, depth)
            if _is_self(func.value):
                cls = self._class_of(node)
                found = self.method_returns(func.attr, cls) if cls is not None else None
                if found is not None:
                    return found
        callee = self.infer(func, node, depth)
        if callee & Kind.CRITERION:
            return Kind.LOSS
        if callee & Kind.MODEL:
            return Kind.TENSOR
        return Kind.NONE

    def _class_of(self, node: Where) -> ast.ClassDef | None:
        scope: ScopeFacts | None = self._scope(node)
        while scope is not None and not isinstance(scope.node, ast.ClassDef):
            scope = scope.parent
        return scope.node if scope is not None and isinstance(scope.node, ast.ClassDef) else None

    # -- parameters ---------------------------------------------------------------------------
    def _param_kind(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, param: ast.arg) -> Kind:
        """What every call site of this file passes for `param` (NONE without a call site)."""
        if id(fn) in self._passing:
            return Kind.NONE  # a call site whose argument is the parameter's own function's result
        self._passing.add(id(fn))
        try:
            return agree([self.infer(arg, caller) if arg else Kind.NONE for arg, caller in self._arguments(fn, param)])
        finally:
            self._passing.discard(id(fn))

    def _arguments(
        self, fn: ast.FunctionDef | ast.AsyncFunctionDef, param: ast.arg
    ) -> Iterator[tuple[ast.expr | None, Scoped]]:
        """(argument, caller scope) for `param` at each call of `fn` in this file; None: nothing can be said
        of it (`*args` at the call, or missing without a default)."""
        scope = self.facts.scopes[id(fn)]
        cls = scope.parent.node if scope.parent is not None and isinstance(scope.parent.node, ast.ClassDef) else None
        positional = [*fn.args.posonlyargs, *fn.args.args]
        index = next((i for i, p in enumerate(positional) if p is param), None)
        if cls is not None and index is not None:
            index -= 1  # `self` is bound by the call
        for call, chain in calls_of(self.facts, ("self" if cls else "name", fn.name)):
            if cls is not None and cls not in chain:
                continue
            caller = chain[-1] if chain else self.facts.module
            if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
                yield None, caller
                continue
            arg = next((k.value for k in call.keywords if k.arg == param.arg), None)
            if arg is None and index is not None and 0 <= index < len(call.args):
                arg = call.args[index]
            if arg is not None or not _has_default(fn, param):
                yield arg, caller

    # -- building a scope's bindings -------------------------------------------------------------
    def _bind(self, node: Where, name: str, kind: Kind) -> None:
        """Record `name` as bound in `node` (a NONE kind still shadows outer scopes)."""
        scope = self._scope(node)
        foreign = name in scope.declared_global or name in scope.declared_nonlocal
        bindings = self._exported.setdefault(id(node), {}) if foreign else self._bindings[id(node)]
        bindings[name] = bindings.get(name, Kind.NONE) | kind

    def _build(self, scope: ScopeFacts) -> None:
        node = _statements_of(scope)
        if isinstance(node, ast.ClassDef):
            self._build_class_attributes(node)
            return
        if isinstance(node, FUNCTIONS):
            self._bind_params(node, scope)
        for stmt in own_statements(node.body):
            if isinstance(stmt, (ast.For, ast.AsyncFor)):
                self._bind_for(node, stmt)
            elif isinstance(stmt, (ast.With, ast.AsyncWith)):
                for item in stmt.items:
                    if item.optional_vars is not None:
                        kind = self.infer(item.context_expr, node)
                        for target, _ in _targets(item.optional_vars):
                            self._assign(node, target, kind)
            elif isinstance(stmt, ast.Assign):
                for target in stmt.targets:
                    self._assign_value(node, target, stmt.value)
            elif isinstance(stmt, ast.AnnAssign):
                kind = kind_from_annotation(imported(self.summary, stmt.annotation))
                if stmt.value is not None:
                    kind |= self.infer(stmt.value, node)
                self._assign(node, stmt.target, kind)
        self._bind_losses(node, scope)
        for declarer, names in declarers(self.facts).get(id(node), ()):
            self.bindings(_statements_of(declarer))  # building it fills its exported names
            exported = self._exported.get(id(declarer.node), {})
            for name in names & exported.keys():
                self._bind(node, name, exported[name])

    def _bind_losses(self, node: Scoped, scope: ScopeFacts) -> None:
        """Anything `.backward()` is called on is a loss; so is what `accelerator.backward(x)` is given."""
        if "backward" not in self.facts.text:
            return
        for call in calls_in(scope).backward:
            func = call.func
            assert isinstance(func, ast.Attribute), "backward calls are method calls"
            if func.attr == "backward" and isinstance(func.value, ast.Name) and not call.args:
                self._bind(node, func.value.id, Kind.LOSS)
            elif (
                (func.attr == "manual_backward" or self.infer(func.value, node) & Kind.ACCELERATOR)
                and call.args
                and isinstance(call.args[0], ast.Name)
            ):
                self._bind(node, call.args[0].id, Kind.LOSS)

    def _assign_value(self, node: Scoped, target: ast.expr, value: ast.expr) -> None:
        if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)):
            for t, i in _targets(target):
                if i is not None and i < len(value.elts):
                    self._assign(node, t, self.infer(value.elts[i], node))
            return
        if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, ast.Call):
            # model, opt = accelerator.prepare(model, opt) / fabric.setup(...)
            if isinstance(value.func, ast.Attribute) and value.func.attr in ("prepare", "setup"):
                args = [*value.args, *(k.value for k in value.keywords)]
                for t, i in _targets(target):
                    if i is not None and i < len(args):
                        self._assign(node, t, self.infer(args[i], node))
                return
        self._assign(node, target, self.infer(value, node))

    def _assign(self, node: Scoped, target: ast.expr, kind: Kind) -> None:
        if isinstance(target, ast.Name):
            self._bind(node, target.id, kind)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for t, _ in _targets(target):
                self._assign(node, t, Kind.NONE)

    def _bind_for(self, node: Scoped, stmt: ast.For | ast.AsyncFor) -> None:
        if self.infer(stmt.iter, node) & Kind.DATALOADER or self._iterates_loader(stmt.iter, node):
            for t, _ in _targets(stmt.target):
                for inner, _ in _targets(t):
                    if isinstance(inner, ast.Name):
                        self._bind(node, inner.id, Kind.BATCH)

    def _iterates_loader(self, expr: ast.expr, node: Scoped) -> bool:
        """`enumerate(loader)`, `tqdm(loader)`, `zip(a_loader, b_loader)`."""
        if isinstance(expr, ast.Call) and (expr.args or expr.keywords):
            inner = expr.args[0] if expr.args else expr.keywords[0].value
            return bool(self.infer(inner, node) & Kind.DATALOADER) or self._iterates_loader(inner, node)
        return False

    def _bind_params(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, scope: ScopeFacts) -> None:
        args = fn.args
        positional = [*args.posonlyargs, *args.args]
        defaults: dict[int, ast.expr] = {
            id(p): d for p, d in zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True)
        }
        defaults.update((id(p), d) for p, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None)
        outer = _statements_of(scope.parent) if scope.parent is not None else fn
        pending = self._pending.setdefault(id(fn), {})
        for p in (*positional, *args.kwonlyargs):
            kind = Kind.NONE
            if p.annotation is not None:
                kind = kind_from_annotation(imported(self.summary, p.annotation))
            default = defaults.get(id(p))
            if not kind and default is not None:
                kind = self.infer(default, outer)
            if kind:
                self._bind(fn, p.arg, kind)
            else:
                pending[p.arg] = p
        for star in (args.vararg, args.kwarg):
            if star is not None:
                self._bind(fn, star.arg, Kind.CONTAINER)

    def _build_class_attributes(self, cls: ast.ClassDef) -> None:
        """`self.x = ...` in any method binds `self.x` in the class scope."""
        for method in cls.body:
            if not isinstance(method, ast.FunctionDef):
                continue
            for stmt in own_statements(method.body):
                if not isinstance(stmt, (ast.Assign, ast.AnnAssign)) or stmt.value is None:
                    continue
                kind = self.infer(stmt.value, method)
                for t in stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]:
                    if isinstance(t, ast.Attribute) and _is_self(t.value):
                        self._bind(cls, "self." + t.attr, kind)


def own_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement of a body in source order, into compound statements but not into defs or classes."""
    stack: list[ast.AST] = list(reversed(body))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.stmt):
            yield node
            if isinstance(node, DEF_CLASSES):
                continue
        for name in ("cases", "finalbody", "orelse", "handlers", "body"):  # onto a stack: the first comes off first
            block = getattr(node, name, None)
            if type(block) is list:
                stack.extend(reversed(block))


def _targets(target: ast.expr) -> Iterator[tuple[ast.expr, int | None]]:
    """(target, position) pairs of an assignment target; position None = whole value."""
    if isinstance(target, (ast.Tuple, ast.List)):
        for i, el in enumerate(target.elts):
            if not isinstance(el, ast.Starred):
                yield el, i
    else:
        yield target, None


def _has_default(fn: ast.FunctionDef | ast.AsyncFunctionDef, param: ast.arg) -> bool:
    args = fn.args
    positional = [*args.posonlyargs, *args.args]
    if param in positional:
        return positional.index(param) >= len(positional) - len(args.defaults)
    return any(p is param and d is not None for p, d in zip(args.kwonlyargs, args.kw_defaults, strict=True))


def _is_self(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Name) and expr.id == "self"


def imported(summary: ModuleSummary, expr: ast.expr) -> str | None:
    """The qualified name of a name chain whose head the file imports (None otherwise)."""
    text = _dotted(expr)
    if text is None or text.partition(".")[0] not in summary.imports:
        return None
    return qualify(summary, expr)


def _dotted(expr: ast.expr) -> str | None:
    parts: list[str] = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return None
    parts.append(expr.id)
    return ".".join(reversed(parts))


def _common(kinds: list[Kind]) -> Kind:
    """TENSOR when every kind is a tensor or loss (and none a number); else NONE."""
    if kinds and all(k & (Kind.TENSOR | Kind.LOSS) and not k & Kind.NUMBER for k in kinds):
        return Kind.TENSOR
    return Kind.NONE
