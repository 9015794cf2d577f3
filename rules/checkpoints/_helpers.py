"""What more than one place of the checkpoint rules needs: what the weights-only unpickler refuses, and the
`torch.save` calls of other project files (TL604 pairs a load with a save of the same literal path there)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from torchlint.engine.semantic import inference
from torchlint.engine.semantic.kinds import Kind
from torchlint.engine.semantic.project import ModuleSummary, Project, qualify
from torchlint.engine.semantic.scopes import Scoped
from torchlint.engine.torch.activations import relative_path

# Kinds of object the weights-only unpickler refuses (they pickle a class by import path).
PICKLED_KINDS = {
    Kind.MODEL: "a whole module",
    Kind.OPTIMIZER: "an optimizer object",
    Kind.SCHEDULER: "a scheduler object",
}
NUMPY, NAMESPACE = "a numpy object", "an `argparse.Namespace`"
_PLAIN = Kind.TENSOR | Kind.CONTAINER | Kind.NUMBER


@dataclass(frozen=True)
class SavedElsewhere:
    place: str  # "train.py:12"
    what: str


def saved_elsewhere(project: Project, here: Path, path: str) -> SavedElsewhere | None:
    """A `torch.save(obj, "<path>")` in another project file whose `obj` the weights-only unpickler refuses."""
    callers = project.calling("save")
    if callers is None:
        return None  # the project's callers are unknown (its index is not ready, or too large)
    for summary in callers:
        if summary.path == here:
            continue
        tree = summary.tree
        for scope in (tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))):
            found = _in_scope(project, summary, scope, path)
            if found is not None:
                return found
    return None


def _in_scope(project: Project, summary: ModuleSummary, scope: Scoped, path: str) -> SavedElsewhere | None:
    local: dict[str, ast.expr] = {}
    for node in _own_nodes(scope):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            local[node.targets[0].id] = node.value
        if not (isinstance(node, ast.Call) and qualify(summary, node.func) == "torch.save" and len(node.args) >= 2):
            continue
        target = node.args[1]
        if not (isinstance(target, ast.Constant) and target.value == path):
            continue
        saved = node.args[0]
        if isinstance(saved, ast.Name) and isinstance(local.get(saved.id), ast.Dict):
            saved = local[saved.id]
        values = [v for v in saved.values if v is not None] if isinstance(saved, ast.Dict) else [saved]
        for value in values:
            what = _refused(project, summary, value, scope, local)
            if what is not None:
                return SavedElsewhere(f"{relative_path(summary.path, project.root)}:{node.lineno}", what)
    return None


def _refused(
    project: Project, summary: ModuleSummary, expr: ast.expr, scope: Scoped, local: dict[str, ast.expr]
) -> str | None:
    kind = inference.for_file(project, summary).infer(expr, scope)
    for flag, what in PICKLED_KINDS.items():
        if kind & flag and not kind & _PLAIN:
            return what
    value = local.get(expr.id) if isinstance(expr, ast.Name) else expr
    if not isinstance(value, ast.Call):
        return None
    q = qualify(summary, value.func) or ""
    if q.startswith("numpy."):
        return NUMPY
    func = value.func
    if isinstance(func, ast.Attribute) and func.attr == "parse_args":
        parser = local.get(func.value.id) if isinstance(func.value, ast.Name) else func.value
        if isinstance(parser, ast.Call) and qualify(summary, parser.func) == "argparse.ArgumentParser":
            return NAMESPACE
    return None


def _own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a module or function body in source order, not those of nested definitions."""
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop(0)
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            todo[:0] = list(ast.iter_child_nodes(node))
