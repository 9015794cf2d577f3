"""What a project's classes, functions and module globals are: one inference for every file.

A class's kind (its hierarchy: `class Net(BaseModel)` with `BaseModel(nn.Module)` two files away, `class
Sched(torch.optim.lr_scheduler.LRScheduler)`), what a function returns and what a module-level name holds
are read here, over one representation: each file's `ast` summary (project.ModuleSummary, kept per
content). The file being linted is summarised by the same `summarize` and asked the same questions, so a
class gets one kind whichever file asks about it. What a name holds at a point of the file being linted
(locals, parameters, loop targets) is semantics.py's, over that file's libcst tree; it asks here about
every class, and about the functions and globals of other files.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from torchlint.engine.semantic.kinds import (
    PASS_THROUGH,
    SAME_OBJECT_METHODS,
    Kind,
    agree,
    is_module_base,
    kind_from_qualname,
)
from torchlint.engine.semantic.project import ModuleSummary, qualify

if TYPE_CHECKING:
    from torchlint.engine.semantic.project import Project

# What a class inherits from a library base: a module, or one of these (a subclass of DataLoader is one).
_INHERITED = Kind.MODEL | Kind.OPTIMIZER | Kind.SCHEDULER | Kind.DATALOADER | Kind.SAMPLER
_MAX_DEPTH = 12


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

    def _base(self, base: ast.expr) -> Kind:
        q = _imported(self.summary, base)
        if q is None:
            local = self.by_name.get(_dotted(base) or "")
            return self.of(local) if local is not None else Kind.NONE
        if is_module_base(q):
            return Kind.MODEL
        lib = kind_from_qualname(q) & _INHERITED
        if lib:
            return lib
        if self.project is None:
            return Kind.NONE
        found = self.project.resolve(q, self.folder)
        if found is None or found[1] not in found[0].classes:
            return Kind.NONE
        other, name = found
        return classes_of(self.project, other).of(other.class_defs[name])


def classes_of(project: Project, summary: ModuleSummary) -> ClassKinds:
    """The class kinds of a project file's summary, answers kept until a summary changes."""
    return ClassKinds(project, summary, project.kinds)


def call_kind(project: Project, qualname: str, from_dir: Path) -> Kind:
    """Kind of `qualname(...)`: a project class's instance or a project function's result."""
    found = project.resolve(qualname, from_dir)
    if found is None:
        return Kind.NONE
    summary, name = found
    if name in summary.classes:
        return classes_of(project, summary).of(summary.class_defs[name])
    if name not in summary.functions:
        return Kind.NONE
    key = (summary.path, name)
    known = project.kinds.get(key)
    if known is not None:
        return known
    project.kinds[key] = Kind.NONE  # recursion proves nothing
    kind = _returns(project, summary, summary.functions[name])
    project.kinds[key] = kind
    return kind


def is_module_class(project: Project, qualname: str, from_dir: Path) -> bool:
    """`qualname` names a project class that is an nn.Module subclass."""
    found = project.resolve(qualname, from_dir)
    if found is None or found[1] not in found[0].classes:
        return False
    return bool(classes_of(project, found[0]).of(found[0].class_defs[found[1]]) & Kind.MODEL)


def global_kind(project: Project, qualname: str, from_dir: Path) -> Kind:
    """Kind of a module-level variable of a project module (`from config import device`)."""
    found = project.resolve(qualname, from_dir)
    if found is None or found[1] not in found[0].globals:
        return Kind.NONE
    return expr_kind(project, found[0], found[0].globals[found[1]], {})


def _returns(project: Project, summary: ModuleSummary, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> Kind:
    """The kind every `return` of another file's function agrees on."""
    local: dict[str, ast.expr] = {}
    returns: list[ast.expr] = []
    for node in _body_nodes(fn):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            local[node.targets[0].id] = node.value
        elif isinstance(node, ast.Return) and node.value is not None:
            returns.append(node.value)
    return agree([expr_kind(project, summary, r, local) for r in returns])


def expr_kind(
    project: Project, summary: ModuleSummary, expr: ast.expr, local: dict[str, ast.expr], depth: int = 0
) -> Kind:
    """A small evaluator for other files' functions and globals: constructors, project calls, local names,
    `.to()`."""
    if depth > _MAX_DEPTH:
        return Kind.NONE
    if isinstance(expr, (ast.Dict, ast.List, ast.Tuple, ast.DictComp, ast.ListComp)):
        return Kind.CONTAINER
    if isinstance(expr, ast.Name):
        if expr.id in local:
            value = local.pop(expr.id)  # no cycles through `x = f(x)`
            try:
                return expr_kind(project, summary, value, local, depth + 1)
            finally:
                local[expr.id] = value
        if expr.id in summary.globals:
            return expr_kind(project, summary, summary.globals[expr.id], {}, depth + 1)
        return Kind.NONE
    if not isinstance(expr, ast.Call):
        return Kind.NONE
    func = expr.func
    if isinstance(func, ast.Attribute) and func.attr in SAME_OBJECT_METHODS:
        inner = expr_kind(project, summary, func.value, local, depth + 1)
        if inner & Kind.MODEL:
            return inner
    q = qualify(summary, func)
    if q is None:
        return Kind.NONE
    if q in PASS_THROUGH and expr.args:
        return expr_kind(project, summary, expr.args[0], local, depth + 1)
    lib = kind_from_qualname(q)
    if lib:
        return lib
    return call_kind(project, q, summary.path.parent)


def _imported(summary: ModuleSummary, expr: ast.expr) -> str | None:
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


def _body_nodes(fn: ast.AST) -> Iterator[ast.AST]:
    """Nodes of a function body, not descending into nested functions or classes."""
    todo = list(ast.iter_child_nodes(fn))
    while todo:
        node = todo.pop(0)
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(node))
