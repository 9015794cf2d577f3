"""The project a file belongs to: its modules, classes and functions, read lazily across files.

A file is judged with the rest of its project: `class Net(BaseModel)` where
`BaseModel` derives from `nn.Module` two files away, `model = build_model(cfg)`
with `build_model` in `utils.py`, a library module that wraps DDP while the entry
point calls `init_process_group`. Other files are read with CPython's `ast`
(about a tenth of a libcst parse) and only when a question reaches them; each
summary is kept while the file's size and mtime (or the editor's text) are
unchanged, so the language server and `-j` workers pay for a file once.
"""

from __future__ import annotations

import ast
import hashlib
import logging
import os
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from torchlint import notebook
from torchlint.discovery import discover
from torchlint.engine.core.source import python_ast
from torchlint.engine.semantic.import_index import ImportIndex
from torchlint.engine.semantic.kinds import Kind
from torchlint.engine.semantic.names import CANONICAL, relative_module
from torchlint.engine.semantic.source_roots import source_roots
from torchlint.engine.semantic.target_version import TorchVersion
from torchlint.engine.semantic.target_version import resolve as resolve_version

ROOT_MARKERS = ("pyproject.toml", "setup.cfg", "setup.py", ".git")
# Past this many files, questions about every file of the project ("who imports me") answer
# "unknown" (rules stay silent) and the project says so once: never a walk-order-dependent subset.
LIMIT = 20_000
_INDEXED = (".py", ".ipynb")
log = logging.getLogger("torchlint.project")


@dataclass
class ModuleSummary:
    """What other files may ask about one module: its imports, classes, functions and globals."""

    path: Path
    name: str  # dotted module name ("pkg.models.net"); a script's own stem when outside any package
    package: str  # the package relative imports start from
    text: str
    imports: dict[str, str] = field(default_factory=dict)  # local name -> qualified name
    classes: dict[str, list[ast.expr]] = field(default_factory=dict)  # class -> base expressions
    class_defs: dict[str, ast.ClassDef] = field(default_factory=dict)  # class -> its definition (methods)
    all_classes: list[ast.ClassDef] = field(default_factory=list)  # every class, nested too, in source order
    functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = field(default_factory=dict)
    globals: dict[str, ast.expr] = field(default_factory=dict)  # module-level name -> last value
    tree: ast.Module = field(default_factory=lambda: ast.Module([], []))  # the tree the nodes above belong to
    # facts read from the tree by other analyses (inference.py's scopes), made once per content
    derived: dict[str, object] = field(default_factory=dict, repr=False, compare=False)

    @cached_property
    def called(self) -> set[str]:
        """The last name of every function or method the module calls (read on first question)."""
        found: set[str] = set()
        for node in ast.walk(python_ast(self.text)):
            if isinstance(node, ast.Call):
                func = node.func
                if isinstance(func, ast.Attribute):
                    found.add(func.attr)
                elif isinstance(func, ast.Name):
                    found.add(func.id)
        return found


@dataclass
class Dependencies:
    """What one lint read of its project, kept on that lint (FileContext), not on the shared index: the
    server lints on several threads at once, and each lint's cache entry must list its own reads."""

    consulted: set[Path] = field(default_factory=set)  # files whose summaries answered a question
    scanned: bool = False  # every project file was scanned for a token
    # find_module answers (a file's imports are asked about many times); per lint, so a file created
    # since the last lint is found
    found: dict[tuple[str, Path], Path | None] = field(default_factory=dict)
    # the inference over each project file this lint asked about (inference.py): its recursion guards and
    # lazily built bindings are this lint's own
    inferences: dict[Path, object] = field(default_factory=dict)
    inferring: int = 0  # returns being read at once (inference.py's guard on long chains of calls)


_RECORDING: ContextVar[Dependencies | None] = ContextVar("torchlint_dependencies", default=None)


@contextmanager
def recording(deps: Dependencies) -> Iterator[Dependencies]:
    """Record into `deps` what the project index reads while the block runs (in this thread only)."""
    token = _RECORDING.set(deps)
    try:
        yield deps
    finally:
        _RECORDING.reset(token)


def current_dependencies() -> Dependencies:
    """The running lint's record; outside a lint (the server asking for a version) a throwaway one."""
    deps = _RECORDING.get()
    return deps if deps is not None else Dependencies()


class _Snapshot:
    """Whether the files stay as they are while this process runs: the CLI checks a snapshot of them (a
    file created during its run is not its concern), so what it learns of the file system (which folder
    is a project's root, where a module lives) holds for every file it checks. The language server,
    whose files come and go under it, asks again at each lint."""

    on = False
    roots: dict[Path, Path] = {}  # a file's folder -> its project root
    projects: dict[str, Project | None] = {}  # a checked path -> its project


@contextmanager
def files_unchanging() -> Iterator[None]:
    """While the block runs, the files checked do not change (a CLI run, a worker's life): what is learnt
    of the file system is kept for all of it, and forgotten at the end."""
    was = _Snapshot.on
    _Snapshot.on = True
    try:
        yield
    finally:
        _Snapshot.on = was
        if not was:
            _forget_snapshot()


def files_are_unchanging() -> bool:
    return _Snapshot.on


def _forget_snapshot() -> None:
    _Snapshot.roots.clear()
    _Snapshot.projects.clear()
    for project in _PROJECTS.values():
        project._found.clear()


def find_root(path: Path) -> Path:
    """The nearest folder above `path` holding a project marker, else the file's own folder."""
    if _Snapshot.on:
        root = _Snapshot.roots.get(path.parent)
        if root is None:
            root = _Snapshot.roots[path.parent] = _find_root(path)
        return root
    return _find_root(path)


def _find_root(path: Path) -> Path:
    exists = os.path.exists  # on strings: Path objects cost more than the stat itself here
    for folder in path.parents:
        base = str(folder)
        if any(exists(os.path.join(base, m)) for m in ROOT_MARKERS):
            return folder
    return path.parent


def qualify(summary: ModuleSummary, expr: ast.expr) -> str | None:
    """The qualified name an expression of the summarised module refers to (`nn.Softmax` -> torch.nn.Softmax)."""
    parts: list[str] = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return None
    head = expr.id
    if head in summary.imports:
        base = summary.imports[head]
    elif head in summary.classes or head in summary.functions or head in summary.globals:
        base = f"{summary.name}.{head}"
    else:
        base = head  # a builtin (dict, list) or unknown
    full = ".".join([base, *reversed(parts)])
    return CANONICAL.get(full, full)


def summarize(path: Path, name: str, package: str, text: str) -> ModuleSummary | None:
    try:
        tree = python_ast(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    s = ModuleSummary(path, name, package, text, tree=tree)
    for node in _import_order(tree):  # imports anywhere (inside functions too), as the checked file's table
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    s.imports[alias.asname] = alias.name
                else:
                    head = alias.name.split(".")[0]
                    s.imports[head] = head
        elif isinstance(node, ast.ImportFrom):
            base = node.module if not node.level else relative_module(package, node.level, node.module)
            if base is None:
                continue
            for alias in node.names:
                if alias.name != "*":
                    s.imports[alias.asname or alias.name] = f"{base}.{alias.name}"
    s.all_classes = [stmt for stmt in statements(tree.body) if isinstance(stmt, ast.ClassDef)]
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef):
            s.classes[stmt.name] = list(stmt.bases)
            s.class_defs[stmt.name] = stmt
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            s.functions[stmt.name] = stmt
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            s.globals[stmt.targets[0].id] = stmt.value
    return s


def _blocks(node: ast.AST) -> list[ast.AST]:
    """The statements (and `except` / `case` clauses) directly inside a statement, in field order."""
    found: list[ast.AST] = []
    for name in ("body", "handlers", "orelse", "finalbody", "cases"):
        block = getattr(node, name, None)
        if type(block) is list:
            found.extend(block)
    return found


def _import_order(tree: ast.Module) -> Iterator[ast.AST]:
    """The statements of a module breadth first, as `ast.walk` meets them (a later import of a name wins),
    without visiting their expressions: imports are statements."""
    todo: deque[ast.AST] = deque(tree.body)
    while todo:
        node = todo.popleft()
        yield node
        todo.extend(_blocks(node))


def statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement of a block in source order, into compound statements, functions and classes (the
    order walk.iter_statements gives a libcst tree of the same text)."""
    stack: list[ast.AST] = list(reversed(body))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.stmt):
            yield node
        stack.extend(reversed(_blocks(node)))


class Project:
    """The modules under one root, summarised on demand."""

    # Whether a question about every file builds the import index at once (the CLI), or answers
    # "unknown" until it is built (the language server builds it in the background, then re-lints).
    waits_for_index = True

    def __init__(self, root: Path) -> None:
        self.root = root
        self._summaries: dict[Path, tuple[object, ModuleSummary | None]] = {}
        self._notebooks: dict[Path, tuple[object, str | None]] = {}  # path -> (stat key, code cells)
        self._overlays: dict[Path, str] = {}  # unsaved editor text, by path
        # the inference's answers about this project's symbols (inference.py), dropped when a file changes
        self.kinds: dict[object, Kind] = {}
        self._files: list[Path] | None = None
        self._digest: str | None = None  # files_digest, until the files change
        self._index: ImportIndex | None = None
        self._todo: set[Path] | None = None  # files to (re)index; None: every file of the project
        self._listing: list[Path] | None = None  # the file list the index was last brought up to
        self._members: set[Path] = set()
        self.index_ready = False  # every file was indexed once (then only changed files are read again)
        self.index_file: Path | None = None  # where the index's facts are kept between runs (None: nowhere)
        self._reported = False  # the over-the-limit message was logged
        self._found: dict[tuple[str, Path], Path | None] = {}  # find_module's answers, files unchanging

    @cached_property
    def source_roots(self) -> tuple[Path, ...]:
        """The folders the project's own packages are imported from (source_roots.py)."""
        return source_roots(self.root)

    @cached_property
    def torch_version(self) -> TorchVersion:
        return resolve_version(self.root)

    # -- files and module names ---------------------------------------------------------
    def set_overlay(self, path: Path, text: str | None) -> None:
        """The editor's text of `path` (None: back to the file on disk)."""
        if text is None:
            self._overlays.pop(path, None)
        else:
            self._overlays[path] = text
        self.kinds.clear()
        if self._todo is not None:
            self._todo.add(path)

    def module_name(self, path: Path) -> tuple[str, str]:
        """(dotted module name, package) of a file under the root; `src/` layouts included."""
        try:
            rel = path.relative_to(self.root)
        except ValueError:
            return path.stem, ""
        parts = list(rel.with_suffix("").parts)
        if parts and parts[0] == "src" and len(parts) > 1:
            parts = parts[1:]
        # Folders without __init__.py above the file are not packages: a script's sibling imports
        # (`from model import Net`) start at its own folder.
        first_package = len(parts) - 1
        folder = path.parent
        while first_package > 0 and (folder / "__init__.py").exists():
            first_package -= 1
            folder = folder.parent
        parts = parts[first_package:]
        if parts[-1] == "__init__":
            parts = parts[:-1]
            return ".".join(parts), ".".join(parts)
        return ".".join(parts), ".".join(parts[:-1])

    def package_of(self, path: Path) -> str:
        return self.module_name(path)[1]

    def find_module(self, name: str, from_dir: Path) -> Path | None:
        key = (name, from_dir)
        known = self._found if _Snapshot.on else current_dependencies().found
        if key in known:
            return known[key]
        parts = name.split(".")
        if self._overlays or not all(p and p != ".." and "/" not in p and os.sep not in p for p in parts):
            found = self._find_module(name, from_dir)
        else:  # the same candidates as strings: this is asked thousands of times a run
            found = None
            isfile = os.path.isfile
            for base in (str(from_dir), *map(str, self.source_roots)):
                folder = os.path.join(base, *parts)
                for candidate in (folder + ".py", os.path.join(folder, "__init__.py")):
                    if isfile(candidate):
                        found = Path(candidate)
                        break
                if found is not None:
                    break
        known[key] = found
        return found

    def _find_module(self, name: str, from_dir: Path) -> Path | None:
        rel = Path(*name.split("."))
        for base in (from_dir, *self.source_roots):
            for candidate in (base / rel.with_suffix(".py"), base / rel / "__init__.py"):
                if candidate in self._overlays or candidate.is_file():
                    return candidate
        return None

    def summary(self, path: Path) -> ModuleSummary | None:
        current_dependencies().consulted.add(path)
        text = self._overlays.get(path)
        try:
            key: object = ("overlay", hash(text)) if text is not None else _stat_key(path)
        except OSError:
            return None
        cached = self._summaries.get(path)
        if cached is not None and cached[0] == key:
            return cached[1]
        if text is None:
            text = self._notebook_code(path) if path.suffix == ".ipynb" else _read(path)
            if text is None:
                return None
        name, package = self.module_name(path)
        summary = summarize(path, name, package, text)
        self._summaries[path] = (key, summary)
        self.kinds.clear()
        return summary

    def forget_files(self, paths: list[Path] | None = None) -> None:
        """Files were created, deleted or changed (the editor's watcher says so; None: any may have):
        list them again, index those again, and read the target torch version again (a config or
        requirements file may be among them). Files changed in place (saved) keep the listing: a save
        costs the files saved, not a walk of the project."""
        in_place = (
            paths is not None
            and self._files is not None
            and self._files is self._listing
            and all(p in self._members and p.is_file() for p in paths)
        )
        self._found.clear()
        if not in_place:
            self._files = None
        self._digest = None
        self.__dict__.pop("torch_version", None)
        if paths is None:
            self._todo = None
        elif self._todo is not None:
            self._todo.update(paths)

    def files(self) -> list[Path]:
        """Every Python file and notebook of the project, as the CLI would check them (discovery.py:
        .gitignore, excludes, environments skipped): notebooks cannot be imported, but they drive a
        project's library modules. Sorted, so every question sees the same files in the same order."""
        if self._files is None:
            from torchlint.config import ConfigResolver
            from torchlint.registry import known_codes  # loaded by any lint already

            try:
                found = [c.path for c in discover([self.root], ConfigResolver(known_codes(), lenient=True), _INDEXED)]
            except OSError:
                found = []
            self._files = found
            if len(found) > LIMIT and not self._reported:
                self._reported = True
                log.warning(
                    "%s: project index limited to %d files (this project has %d): questions about every file of"
                    " the project stay unanswered; check a smaller folder or exclude what is not the project",
                    self.root,
                    LIMIT,
                    len(found),
                )
        return self._files

    @property
    def complete(self) -> bool:
        """Whether questions about every project file can be answered (the project is within LIMIT)."""
        return len(self.files()) <= LIMIT

    def build_index(self, seconds: float | None = None) -> bool:
        """Index the files still to be indexed, for about `seconds` (None: all); True when the index is
        current. The language server builds it in such steps between lints; the CLI on the first question."""
        until = None if seconds is None else time.monotonic() + seconds
        files = self.files()
        if self._index is None:
            self._index = ImportIndex(self._indexed_text, self.package_of)
            if self.index_file is not None:
                self._index.load(self.index_file)
        index = self._index
        if files is not self._listing:  # listed anew: files may have come or gone
            self._listing, self._members = files, set(files)
            index.keep_only(self._members)
            if self._todo is None:
                self._todo = set(files)
            else:
                self._todo.update(p for p in files if not index.has(p))
            if any(p.name == "__init__.py" for p in self._todo):
                index.reindex()  # a package appeared or went: relative imports resolve anew
        todo = self._todo
        assert todo is not None
        while todo and (until is None or time.monotonic() < until):
            path = todo.pop()
            text = self._overlays.get(path)
            if path not in self._members:
                index.remove(path)
            elif text is not None:
                index.update(path, ("overlay", hash(text)), text)
            else:
                try:
                    index.update(path, _stat_key(path))
                except OSError:
                    index.remove(path)
        if todo:
            return False
        self.index_ready = True
        if index.changed and self.index_file is not None:
            index.save(self.index_file)
        return True

    def _indexed_text(self, path: Path) -> str | None:
        """The text the index reads of a file: a notebook's code cells (its JSON holds outputs too)."""
        return self._notebook_code(path) if path.suffix == ".ipynb" else _read(path)

    def _candidates(self, lookup: str, word: str) -> list[ModuleSummary] | None:
        """Summaries of the files the index names for `word` (None: unknown, over LIMIT). Which files
        those are is a dependency of the findings too (`scan_dependency`): one that starts calling it
        changes them."""
        current_dependencies().scanned = True
        if (not self.index_ready and not self.waits_for_index) or not self.complete:
            return None  # readiness first: listing the project is the background build's work
        self.build_index()
        assert self._index is not None
        paths = self._index.importing(word) if lookup == "importing" else self._index.calling(word)
        return [s for s in map(self.summary, paths) if s is not None]

    def calling(self, token: str) -> list[ModuleSummary] | None:
        """Summaries of the project files that call a function or method named `token` (None: unknown)."""
        found = self._candidates("calling", token)
        return None if found is None else [s for s in found if token in s.called]

    @property
    def scan_dependency(self) -> str:
        """A findings cache dependency on every file of the project, for findings that came from a scan of
        them all: a file created, deleted or changed anywhere may have started or stopped calling the token.
        Checked by `files_digest`, file sizes and times, so a warm run reads no file to check it."""
        return f"{SCAN_DEPENDENCY}{self.root}"

    def files_digest(self) -> str:
        if self._digest is None:
            h = hashlib.sha256()
            for path in self.files():
                try:
                    st = path.stat()
                except OSError:
                    continue
                h.update(f"{path}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
            self._digest = h.hexdigest()
        return self._digest

    def _notebook_code(self, path: Path) -> str | None:
        """A notebook's code cells as one program, read again only when the file changes (the token
        scans and the summary share it: building it means decoding the whole JSON, outputs included)."""
        try:
            key = _stat_key(path)
        except OSError:
            return None
        cached = self._notebooks.get(path)
        if cached is None or cached[0] != key:
            cached = self._notebooks[path] = (key, _read(path))
        return cached[1]

    def imported_by(self, path: Path, imports: dict[str, str]) -> list[ModuleSummary]:
        """The project modules a file imports, directly or through each other."""
        seen: dict[Path, ModuleSummary] = {}
        todo = [(q, path.parent) for q in imports.values()]
        while todo:
            q, folder = todo.pop()
            parts = q.split(".")
            for cut in range(len(parts), 0, -1):
                found = self.find_module(".".join(parts[:cut]), folder)
                if found is None:
                    continue
                if found not in seen and found != path:
                    summary = self.summary(found)
                    if summary is not None:
                        seen[found] = summary
                        todo.extend((iq, found.parent) for iq in summary.imports.values())
                break
        return list(seen.values())

    def importers(self, path: Path) -> list[ModuleSummary] | None:
        """Project files that import the module at `path` (directly); None: unknown (over LIMIT)."""
        stem = path.stem if path.name != "__init__.py" else path.parent.name
        found = self._candidates("importing", stem)
        return None if found is None else [s for s in found if self.imports_module(s, path)]

    def imports_module(self, summary: ModuleSummary, path: Path) -> bool:
        """Whether the summarised file imports the module at `path` (one of its imports resolves there)."""
        for q in summary.imports.values():
            parts = q.split(".")
            for cut in range(len(parts), 0, -1):
                if self.find_module(".".join(parts[:cut]), summary.path.parent) == path:
                    return True
        return False

    # -- symbols ------------------------------------------------------------------------
    def resolve(self, qualname: str, from_dir: Path, depth: int = 0) -> tuple[ModuleSummary, str] | None:
        """The project module and top-level name `qualname` refers to (following re-exports)."""
        parts = qualname.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            path = self.find_module(".".join(parts[:cut]), from_dir)
            if path is None:
                continue
            summary = self.summary(path)
            if summary is None or cut != len(parts) - 1:
                return None
            attr = parts[cut]
            if attr in summary.classes or attr in summary.functions or attr in summary.globals:
                return summary, attr
            if attr in summary.imports and depth < 8:  # `from .net import Net` in a package __init__
                return self.resolve(summary.imports[attr], path.parent, depth + 1)
            return None
        return None


def _read(path: Path) -> str | None:
    """A module's text; a notebook's code cells as one program (notebook.py), as it is checked. Only a regular
    file: reading a FIFO named `x.py` would block forever (the CLI reports it as not a regular file)."""
    try:
        if not path.is_file():
            return None
        if path.suffix != ".ipynb":
            return path.read_text(encoding="utf-8", errors="replace")
        return notebook.build(notebook.read_ipynb(path.read_bytes())[1]).text
    except (OSError, notebook.NotebookError):
        return None


def _stat_key(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_mtime_ns, st.st_size


_PROJECTS: dict[Path, Project] = {}


def target_version(path: Path, configured: str | None = None) -> TorchVersion:
    """The torch a file targets: `configured` (the `torch-version` of the settings that apply to it),
    else its project's (declared dependencies, installed torch), kept until the project's files change."""
    if configured:
        return resolve_version(None, configured)
    project = project_for(str(path / "__init__.py" if path.is_dir() else path))
    return resolve_version(None) if project is None else project.torch_version


SCAN_DEPENDENCY = "torchlint-scan:"  # "torchlint-scan:<project root>", beside the paths of files


def scan_digest(dependency: str) -> str:
    """What a scan dependency stands for now: the project's files, their sizes and times."""
    return project_at(Path(dependency[len(SCAN_DEPENDENCY) :])).files_digest()


def forget_files(paths: list[str] | None = None) -> None:
    """Files changed on disk: the projects holding them (all, for None) list files and read settings anew."""
    resolved = None if paths is None else [Path(p).resolve() for p in paths]
    _forget_snapshot()
    for root, project in _PROJECTS.items():
        if resolved is None:
            project.forget_files()
        elif any(p.is_relative_to(root) for p in resolved):
            project.forget_files([p for p in resolved if p.is_relative_to(root)])


def project_for(path: str) -> Project | None:
    """The project of a file (an editor's unsaved buffer in a real folder too); None for a bare snippet path."""
    if _Snapshot.on:
        if path not in _Snapshot.projects:
            _Snapshot.projects[path] = _project_for(path)
        return _Snapshot.projects[path]
    return _project_for(path)


def _project_for(path: str) -> Project | None:
    p = Path(path)
    if p.suffix == ".ipynb" or ":" in p.name:
        p = Path(str(p).split(":cell_")[0])
    if not p.is_absolute() and not p.exists():
        return None  # a snippet ("example.py"): no project around it
    try:
        p = p.resolve()
        if not p.parent.is_dir():
            return None
    except (OSError, RuntimeError):  # a symlink loop is a RuntimeError before Python 3.13
        return None
    return project_at(find_root(p))


def keep_index_in(directory: Path, path: str) -> None:
    """Keep the import index of `path`'s project in `directory` (the CLI's cache) between runs."""
    project = project_for(path)
    if project is not None and project.index_file is None:
        name = hashlib.sha256(str(project.root).encode()).hexdigest()[:24]
        project.index_file = directory / "index" / f"{name}.json"


def project_at(root: Path) -> Project:
    """The one index of the project at `root`, made on first use."""
    project = _PROJECTS.get(root)
    if project is None:
        project = _PROJECTS[root] = Project(root)
    return project
