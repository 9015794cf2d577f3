"""Which files to check: walk directories, honour .gitignore and excludes."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pathspec

from torchlint.config import ConfigResolver

SUFFIXES = (".py", ".pyi", ".ipynb")


@dataclass(frozen=True)
class Candidate:
    path: Path
    explicit: bool  # named on the command line: checked even if excluded


def _gitignore(directory: Path) -> pathspec.PathSpec | None:
    f = directory / ".gitignore"
    if not f.is_file():
        return None
    try:
        lines = f.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    return pathspec.GitIgnoreSpec.from_lines(lines)


def _ancestor_ignores(directory: Path) -> list[tuple[Path, pathspec.PathSpec]]:
    """.gitignore files above the walk root, up to the repository root."""
    found = []
    d = Path(os.path.abspath(directory))
    while True:
        spec = _gitignore(d)
        if spec is not None:
            found.append((d, spec))
        if (d / ".git").exists() or d.parent == d:
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
            specs = [(b, s) for b, s in specs if b == absd or b in absd.parents]
            if d != root:
                spec = _gitignore(d)
                if spec is not None:
                    specs.append((absd, spec))
            settings = resolver.for_path(d / "_")
            keep = []
            for name in sorted(dirnames):
                sub = d / name
                rel = _rel(sub, anchor or settings.root)
                if settings.excluded(rel) or _ignored(absd / name, True, specs):
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


def _rel(path: Path, root: Path) -> str:
    try:
        return Path(os.path.abspath(path)).relative_to(os.path.abspath(root)).as_posix()
    except ValueError:
        return path.as_posix()
