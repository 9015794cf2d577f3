"""The checkpoints the project writes: its `torch.save` calls, what each saves that the weights-only unpickler
refuses, and the save helpers that hand their parameters to `torch.save`, read over the project files' `ast`
summaries (those that call `save` or `load`, from the project index).

A `torch.load` is judged by the file it reads. TL604 pairs a load with a save of the same literal path in another
file, and follows a save helper of this file or another (`utils.save_on_master(state, path)`); TL601 leaves a
load of a file the project itself writes alone. Rules ask `SavedCheckpoints` (one per lint:
each question scans the project once) and never read another file's tree.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeGuard

import libcst as cst

from torchlint.engine.semantic import inference
from torchlint.engine.semantic.kinds import PATH_QUERIES, PYTEST_TEMPORARY_FIXTURES, TEMPORARY_PATHS, Kind
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
# What a saved value may also be, with one of those kinds, and load all the same (not proven refused).
PLAIN = Kind.TENSOR | Kind.CONTAINER | Kind.NUMBER


@dataclass(frozen=True)
class SavedElsewhere:
    place: str  # "train.py:12"
    what: str  # what it saves that the weights-only unpickler refuses ("": nothing proven)


# A save helper's parameters that become `torch.save`'s object and path: (keyword, position) of each.
Slots = tuple[tuple[str, int], tuple[str, int]]


class SavedCheckpoints:
    """The project's checkpoints as the linted file's loads ask about them."""

    def __init__(
        self,
        project: Project | None,
        here: Path,
        own: Callable[[], ModuleSummary | None],
        qualname: Callable[[cst.BaseExpression], str | None],
        folder: Path | None,
    ) -> None:
        self.project = project
        self.here = here  # the linted file, resolved
        self.own = own  # its summary (asked on the first helper question)
        self.qualname = qualname
        self.folder = folder  # where its sibling imports resolve
        self._written: dict[str, bool] = {}

    def saved_elsewhere(self, path: str) -> SavedElsewhere | None:
        """A `torch.save(obj, "<path>")` in another project file whose `obj` the weights-only unpickler refuses."""

        def same(target: ast.expr) -> bool:
            return isinstance(target, ast.Constant) and target.value == path

        if self.project is None:
            return None
        saves = _project_saves(self.project, same, skip=self.here)
        return next((found for found in saves if found is not None and found.what), None) if saves else None

    def written_by_project(self, name: str) -> bool:
        """The project writes the file `name` itself: some project file's `torch.save` targets a path ending in
        that file name (`torch.save(train_set, out / "train.pt")`), and every other mention of the name in the
        files that save or load is the path of a `torch.save` or `torch.load`, an existence check or a path in a
        temporary folder (a helper handed the name may write anything, a download may fetch it: not proven).
        One scan of the project per file name."""
        known = self._written.get(name)
        if known is None:
            known = self._written[name] = self.project is not None and _written_by_project(self.project, name)
        return known

    def save_helper(self, func: cst.BaseExpression) -> Slots | None:
        """The slots of the call's arguments that a plain function of this file or another project file hands
        to its one `torch.save` as the object and the path (`save_on_master(state, path)`, or all of them:
        `torch.save(*args, **kwargs)`); None when `func` is no such helper."""
        helper = self._helper(func)
        if helper is None:
            return None
        summary, fn = helper
        saves = [
            n
            for n in ast.walk(fn)
            if isinstance(n, ast.Call)
            and qualify(summary, n.func) == "torch.save"
            and (len(n.args) >= 2 or (n.args and isinstance(n.args[0], ast.Starred)))
        ]
        if len(saves) != 1:
            return None
        (save,) = saves
        params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
        if isinstance(save.args[0], ast.Starred) and fn.args.vararg is not None:  # torch.save(*args, **kwargs)
            forwarded = isinstance(save.args[0].value, ast.Name) and save.args[0].value.id == fn.args.vararg.arg
            return (("obj", 0), ("f", 1)) if forwarded and not params else None
        found = []
        for arg in save.args[:2]:
            if not isinstance(arg, ast.Name) or arg.id not in params:
                return None
            found.append((arg.id, params.index(arg.id)))
        return found[0], found[1]

    def _helper(self, func: cst.BaseExpression) -> tuple[ModuleSummary, ast.FunctionDef] | None:
        """The `ast` definition of the plain function `func` calls, in this file or another project file."""
        q = self.qualname(func)
        if q is None:
            own = self.own()
            if own is None or not isinstance(func, cst.Name) or func.value not in own.functions:
                return None
            summary, name = own, func.value
        else:
            project, folder = self.project, self.folder
            found = project.resolve(q, folder) if project is not None and folder is not None else None
            if found is None:
                return None
            summary, name = found
        fn = summary.functions.get(name)
        return (summary, fn) if isinstance(fn, ast.FunctionDef) else None


def _written_by_project(project: Project, name: str) -> bool:
    def same(target: ast.expr) -> bool:
        return file_name(target) == name

    saves, loaders = _project_saves(project, same), project.calling("load")
    if not saves or loaders is None:
        return False
    files = {s.path: s for s in (*(project.calling("save") or ()), *loaders)}
    return all(_only_as_path(summary, name) for summary in files.values())


def _only_as_path(summary: ModuleSummary, name: str) -> bool:
    """Every string naming the file `name` in `summary` is (part of) a `torch.save` or `torch.load` path, or of
    a path in a fresh temporary directory (a test's own file)."""
    paths = _temporary(summary)
    path_names: set[str] = set()
    for node in ast.walk(summary.tree):
        if isinstance(node, ast.Call) and qualify(summary, node.func) in ("torch.save", "torch.load"):
            index = 1 if qualify(summary, node.func) == "torch.save" else 0
            keyword = next((k.value for k in node.keywords if k.arg == "f"), None)
            target = node.args[index] if len(node.args) > index else keyword
            if target is not None:
                paths.update(id(n) for n in ast.walk(target))
                path_names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    for node in ast.walk(summary.tree):
        if isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) and t.id in path_names for t in node.targets):
            paths.update(id(n) for n in ast.walk(node.value))  # `path = "x.pt"`, only ever a save or load path
        elif isinstance(node, ast.Call) and qualify(summary, node.func) in PATH_QUERIES:
            paths.update(id(n) for n in ast.walk(node))  # `if not exists("vocab.pt"):` reads nothing of it
        elif isinstance(node, ast.With):
            for item in node.items:  # `with open("x.pt", "wb") as f: torch.save(x, f)`
                opened = item.context_expr
                if (
                    _opens_a_file(opened)
                    and isinstance(item.optional_vars, ast.Name)
                    and item.optional_vars.id in path_names
                ):
                    paths.update(id(n) for n in ast.walk(opened))
    return all(
        id(n) in paths
        for n in ast.walk(summary.tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.rpartition("/")[2] == name
    )


def _opens_a_file(expr: ast.expr) -> TypeGuard[ast.Call]:
    """`open(...)`: the builtin's call, whose first argument names the file."""
    return isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "open"


def _temporary(summary: ModuleSummary) -> set[int]:
    """The string constants of `summary` in values built on a fresh temporary directory or file: a name bound
    by `with tempfile.TemporaryDirectory() as d`, `tempfile.mkdtemp()`, pytest's `tmp_path` of a test
    function, and the names assigned from values that read one (`fn = str(Path(d) / "test.pt")`)."""
    found: set[int] = set()
    tree = summary.tree
    for scope in (tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))):
        made: set[str] = set()
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) and scope.name.startswith("test"):
            made = {a.arg for a in scope.args.args if a.arg in PYTEST_TEMPORARY_FIXTURES}
        for node in _own_nodes(scope):
            if isinstance(node, ast.withitem) and isinstance(node.optional_vars, ast.Name):
                if (
                    isinstance(node.context_expr, ast.Call)
                    and qualify(summary, node.context_expr.func) in TEMPORARY_PATHS
                ):
                    made.add(node.optional_vars.id)
            if isinstance(node, (ast.BinOp, ast.Call, ast.JoinedStr)) and _reads(node, made):
                found.update(id(n) for n in ast.walk(node) if isinstance(n, ast.Constant))  # `tmp_path / "x.pt"`
            if isinstance(node, ast.Assign):
                value = node.value
                fresh = isinstance(value, ast.Call) and qualify(summary, value.func) in TEMPORARY_PATHS
                if fresh or _reads(value, made):
                    made.update(n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return found


def _reads(expr: ast.AST, names: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(expr))


def file_name_of(source: str) -> str | None:
    """`file_name` of a path expression written in the linted file (its source text)."""
    try:
        return file_name(ast.parse(f"({source.strip()})", mode="eval").body)  # parenthesised: it may span lines
    except SyntaxError:
        return None


def file_name(path: ast.expr) -> str | None:
    """The file name a path expression ends in: `"ckpt/last.pt"`, `os.path.join(d, "train.pt")`, `d + "train.pt"`,
    `Path(d, "train.pt")`, `out / "train.pt"`, `f"{d}/train.pt"`; None when it ends in something else
    (`args.out`, `f"{name}.pt"`) or, built from parts, ends in a part with no suffix (a folder)."""
    last: ast.expr | None = path
    if _opens_a_file(path):
        last = path.args[0] if path.args else None  # the file object of `open("x.pt", "rb")`
    elif isinstance(path, ast.Call):
        last = path.args[-1] if path.args and not path.keywords else None
    elif isinstance(path, ast.BinOp) and isinstance(path.op, (ast.Div, ast.Add)):
        last = path.right  # `out / "train.pt"`, `data_path + "train.pt"`
    elif isinstance(path, ast.JoinedStr):
        last = path.values[-1] if path.values else None
    if last is not path and last is not None and not isinstance(last, ast.Constant):
        return file_name(last)
    if not (isinstance(last, ast.Constant) and isinstance(last.value, str)):
        return None
    name = last.value.rpartition("/")[2]
    if isinstance(path, ast.JoinedStr) and name == last.value:
        return None  # `f"{name}.pt"`: the name is built
    if last is path and name:
        return name  # the whole path is one literal (`"x-file"`): a file, with or without a suffix
    return name if "." in name.strip(".") else None


def _project_saves(
    project: Project, matches: Callable[[ast.expr], bool], skip: Path | None = None
) -> list[SavedElsewhere] | None:
    """Every `torch.save` of the project's files (but `skip`) whose path argument `matches`, with what it
    saves that the weights-only unpickler refuses ("" for none proven). None: the project's callers are
    unknown (its index is not ready, or too large)."""
    callers = project.calling("save")
    if callers is None:
        return None
    found: list[SavedElsewhere] = []
    for summary in callers:
        if summary.path == skip:
            continue
        tree = summary.tree
        for scope in (tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))):
            found.extend(_in_scope(project, summary, scope, matches))
    return found


def _in_scope(
    project: Project, summary: ModuleSummary, scope: Scoped, matches: Callable[[ast.expr], bool]
) -> Iterator[SavedElsewhere]:
    local: dict[str, ast.expr] = {}
    for node in _own_nodes(scope):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            local[node.targets[0].id] = node.value
        elif isinstance(node, ast.With):  # `with open("x.pt", "wb") as f:`: `f` is that file
            local.update(
                (i.optional_vars.id, i.context_expr) for i in node.items if isinstance(i.optional_vars, ast.Name)
            )
        if not (isinstance(node, ast.Call) and qualify(summary, node.func) == "torch.save" and len(node.args) >= 2):
            continue
        target = node.args[1]
        if not matches(local.get(target.id, target) if isinstance(target, ast.Name) else target):
            continue
        saved = node.args[0]
        if isinstance(saved, ast.Name) and isinstance(local.get(saved.id), ast.Dict):
            saved = local[saved.id]
        values = [v for v in saved.values if v is not None] if isinstance(saved, ast.Dict) else [saved]
        refused = (_refused(project, summary, value, scope, local) for value in values)
        what = next((w for w in refused if w is not None), "")
        yield SavedElsewhere(f"{relative_path(summary.path, project.root)}:{node.lineno}", what)


def _refused(
    project: Project, summary: ModuleSummary, expr: ast.expr, scope: Scoped, local: dict[str, ast.expr]
) -> str | None:
    kind = inference.for_file(project, summary).infer(expr, scope)
    for flag, what in PICKLED_KINDS.items():
        if kind & flag and not kind & PLAIN:
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
