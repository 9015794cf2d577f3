"""Where a project's own packages are imported from: its root, `src/`, and the folders its `pyproject.toml`
hands setuptools (`package-dir = {"" = "pkg"}`, `[tool.setuptools.packages.find] where = ["pkg"]`), so a
notebook's `from llms_from_scratch.ch04 import GPTModel` reads the project's file, not an unknown library."""

from __future__ import annotations

import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib


def source_roots(root: Path) -> tuple[Path, ...]:
    """`root`, `root/src`, then each existing folder under `root` that pyproject.toml names as a package root."""
    found = [root, root / "src"]
    try:
        data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, ValueError):  # unreadable, not UTF-8, not TOML
        return tuple(found)
    tool = data.get("tool")
    setuptools = tool.get("setuptools") if isinstance(tool, dict) else None
    if not isinstance(setuptools, dict):
        return tuple(found)
    dirs = setuptools.get("package-dir")
    packages = setuptools.get("packages")
    find = packages.get("find") if isinstance(packages, dict) else None
    where = find.get("where") if isinstance(find, dict) else None
    named = [dirs.get("")] if isinstance(dirs, dict) else []
    named += where if isinstance(where, list) else []
    for folder in named:
        if not isinstance(folder, str) or not folder or Path(folder).is_absolute() or ".." in Path(folder).parts:
            continue
        path = root / folder
        if path not in found and path.is_dir():
            found.append(path)
    return tuple(found)
