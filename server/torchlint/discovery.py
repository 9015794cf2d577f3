"""The one file set: which files the CLI checks, the project index reads and the editor's
"lint workspace" publishes. A walk skips, in this order of cost: what `.gitignore` files and
`.git/info/exclude` ignore, the `exclude` / `extend-exclude` patterns (with the default ones),
and any folder that is a Python environment whatever its name (`is_environment`). A folder or
file named on the command line is walked even if it is one of those (docs/configuration.md).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from torchlint.config import ConfigResolver

if TYPE_CHECKING:
    import pathspec

SUFFIXES = (".py", ".pyi", ".ipynb")


@dataclass(frozen=True)
class Candidate:
    path: Path
    explicit: bool  # named on the command line: checked even if excluded


def _gitignore(directory: Path, name: str = ".gitignore") -> pathspec.PathSpec | None:
    f = directory / name
    if not f.is_file():
        return None
    try:
        lines = f.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    import pathspec  # on the first ignore file: a run over named files never needs it (~50 ms to import)

    return pathspec.GitIgnoreSpec.from_lines(lines)


def is_environment(folder: Path) -> bool:
    """A Python environment (venv, virtualenv, conda) or an installed-packages folder, whatever its name:
    `env/`, `venv311/`, `.conda/`, `myenv/` hold thousands of third-party files that are not the project."""
    return folder.name == "site-packages" or (folder / "pyvenv.cfg").is_file() or (folder / "conda-meta").is_dir()


def _info_exclude(repo: Path) -> pathspec.PathSpec | None:
    """The repository's `.git/info/exclude` (`.git` may be a worktree's file naming the git dir)."""
    git = repo / ".git"
    if git.is_file():
        try:
            line = git.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            return None
        if not line.startswith("gitdir:"):
            return None
        git = (repo / line[len("gitdir:") :].strip()).resolve()
        common = git / "commondir"
        if common.is_file():
            try:
                git = (git / common.read_text(encoding="utf-8", errors="replace").strip()).resolve()
            except OSError:
                return None
    return _gitignore(git / "info", "exclude")


def _ancestor_ignores(directory: Path) -> list[tuple[Path, pathspec.PathSpec]]:
    """.gitignore files above the walk root, up to the repository root, and the repository's info/exclude."""
    found = []
    d = Path(os.path.abspath(directory))
    while True:
        spec = _gitignore(d)
        if spec is not None:
            found.append((d, spec))
        if (d / ".git").exists():
            exclude = _info_exclude(d)
            if exclude is not None:
                found.append((d, exclude))
            break
        if d.parent == d:
            break
        d = d.parent
    return list(reversed(found))


def _ignored(path: Path, is_dir: bool, specs) -> bool:
    for base, spec in specs:
        try:
            rel = path.relative_to(base).as_posix()
        except ValueError:
            continue
        if spec.match_file(rel + ("/" if is_dir else "")):
            return True
    return False


def discover(paths: list[Path], resolver: ConfigResolver, suffixes=SUFFIXES) -> list[Candidate]:
    """Files to lint, sorted and de-duplicated. Raises FileNotFoundError for a missing path."""
    out: dict[Path, Candidate] = {}
    for root in paths:
        if not root.exists() and not root.is_symlink():
            raise FileNotFoundError(str(root))
        if not root.is_dir():
            out.setdefault(root, Candidate(root, True))
            continue
        specs = _ancestor_ignores(root)
        if _ignored(Path(os.path.abspath(root)), True, specs):
            specs = [(b, s) for b, s in specs if b == Path(os.path.abspath(root))]
        # A directory named explicitly is walked even if excluded itself (`torchlint check .venv/lib/x`);
        # then excludes apply only to what lies below it.
        root_settings = resolver.for_path(root / "_")
        anchor = root if root_settings.excluded(_rel(root, root_settings.root)) else None
        seen_dirs: set = set()
        for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
            d = Path(dirpath)
            absd = Path(os.path.abspath(d))
            try:
                key = d.resolve()
            except (OSError, RuntimeError):
                continue
            if key in seen_dirs:  # symlink loops
                dirnames[:] = []
                continue
            seen_dirs.add(key)
            here = str(absd)
            specs = [(b, s) for b, s in specs if _within(here, str(b))]
            if d != root:
                spec = _gitignore(d)
                if spec is not None:
                    specs.append((absd, spec))
            settings = resolver.for_directory(key)  # resolved above
            keep = []
            for name in sorted(dirnames):
                sub = d / name
                rel = _rel(sub, anchor or settings.root)
                if settings.excluded(rel) or _ignored(absd / name, True, specs) or is_environment(sub):
                    continue
                keep.append(name)
            dirnames[:] = keep
            for name in sorted(filenames):
                f = d / name
                if not name.endswith(suffixes):
                    continue
                if settings.excluded(_rel(f, anchor or settings.root)) or _ignored(absd / name, False, specs):
                    continue
                out.setdefault(f, Candidate(f, False))
    return sorted(out.values(), key=lambda c: str(c.path))


def _within(path: str, folder: str) -> bool:
    """`Path(folder) == Path(path) or Path(folder) in Path(path).parents`, for absolute normalised paths, on
    their strings: asked for every ignore file above every folder a walk meets."""
    return path == folder or path.startswith(folder if folder.endswith(os.sep) else folder + os.sep)


def _rel(path: Path, root: Path) -> str:
    try:
        return Path(os.path.abspath(path)).relative_to(os.path.abspath(root)).as_posix()
    except ValueError:
        return path.as_posix()
