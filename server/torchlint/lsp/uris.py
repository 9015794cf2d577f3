"""File URIs <-> paths, tolerant of anything a client may send."""

from __future__ import annotations

import os
from pathlib import Path

from pygls import uris


def to_path(uri: str) -> str:
    """The file path of a `file:` URI; for other schemes (untitled:, vscode-notebook-cell:)
    a path in the working directory with the URI's file name, so the nearest config applies."""
    path = uris.to_fs_path(uri) if isinstance(uri, str) and uri.startswith("file:") else None
    if path:
        return path
    name = os.path.basename(str(uri).split("?")[0].split("#")[0]) or "untitled.py"
    return str(Path.cwd() / name)


def from_path(path: str) -> str:
    return uris.from_fs_path(os.path.abspath(path)) or path
