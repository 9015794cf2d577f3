"""Content-hash cache of check results (`.torchlint_cache/`).

Keyed by the file's bytes and real path, torchlint's version and code, and the
settings resolved for the file (config.ConfigResolver.resolve: the rule selection
after per-file ignores, the severities, the target torch version, which comes from
the settings or the project's declared dependencies), so any change to one of them
is a miss. An entry also lists the
other project files its findings were derived from (a base class, a factory)
with their content hashes: a change to one of them is a miss too. Entries are written to
a temporary file and renamed into place: concurrent runs never see half an
entry, and a damaged entry is just a miss. Notebooks are cached like `.py`
files: an entry keeps the cell part of each finding's path.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from functools import cache
from pathlib import Path

from torchlint import __version__
from torchlint.findings import Applicability, Edit, Finding, Fix, Severity

DIRNAME = ".torchlint_cache"


@cache
def _code_fingerprint() -> str:
    """Changes whenever any installed torchlint source file changes (dev installs too)."""
    import torchlint.rules  # the package only: its rule modules load on demand

    h = hashlib.sha256(__version__.encode())
    # In an editable install the rules live outside the package directory: hash both.
    for root in sorted({Path(__file__).resolve().parent, Path(torchlint.rules.__file__).resolve().parent}):
        for p in sorted(root.rglob("*.py")):
            st = p.stat()
            h.update(f"{p}:{st.st_mtime_ns}:{st.st_size}".encode())
    return h.hexdigest()


def default_dir() -> Path:
    return Path(os.environ.get("TORCHLINT_CACHE_DIR") or Path.cwd() / DIRNAME)


def key(data: bytes, path: str, codes, severity, torch_version: str | None) -> str:
    """The entry of one file's findings under its resolved settings. The path is part of it: the same
    bytes in another folder or project may be judged differently (its project, its module name)."""
    h = hashlib.sha256()
    where = os.path.realpath(path)
    h.update(f"{_code_fingerprint()}|{where}|{','.join(codes)}|{severity}|{torch_version}|".encode())
    h.update(data)
    return h.hexdigest()


def _fix_to(fix: Fix | None):
    if fix is None:
        return None
    return [fix.message, [list(e.__dict__.values()) for e in fix.edits], fix.applicability, fix.risk]


def _fix_from(raw) -> Fix | None:
    return None if raw is None else Fix(raw[0], tuple(Edit(*e) for e in raw[1]), Applicability(raw[2]), raw[3])


def _encode(path: str, f: Finding) -> list:
    return [
        f.path[len(path) :] if f.path.startswith(path) else "",  # a notebook finding's `:cell_3`
        f.line,
        f.column,
        f.end_line,
        f.end_column,
        f.code,
        f.name,
        f.message,
        f.severity.value,
        _fix_to(f.fix),
        [_fix_to(a) for a in f.alternatives],
        f.statement_line,
        f.node_end_line,
        list(f.cites),
    ]


def _decode(path: str, raw: list) -> Finding:
    suffix, line, col, eline, ecol, code, name, message, sev, fix, alts, stmt, node_end, cites = raw
    return Finding(
        path + suffix,
        line,
        col,
        eline,
        ecol,
        code,
        name,
        message,
        Severity(sev),
        _fix_from(fix),
        tuple(_fix_from(a) for a in alts),
        stmt,
        node_end,
        tuple(cites),
    )


class Cache:
    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _entry(self, k: str) -> Path:
        return self.directory / k[:2] / k[2:]

    def get(self, k: str, path: str) -> list[Finding] | None:
        try:
            raw = json.loads(self._entry(k).read_bytes())
            if any(_content_hash(dep) != digest for dep, digest in raw["deps"]):
                return None
            return [_decode(path, r) for r in raw["findings"]]
        except (OSError, ValueError, TypeError, KeyError):
            return None

    def put(self, k: str, path: str, findings: list[Finding], dependencies: tuple[str, ...] = ()) -> None:
        entry = self._entry(k)
        try:
            if not (self.directory / ".gitignore").exists():  # made by the project index's facts too
                self.directory.mkdir(parents=True, exist_ok=True)
                (self.directory / ".gitignore").write_text("*\n")
            entry.parent.mkdir(exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=entry.parent, prefix=".tmp-")
            with os.fdopen(fd, "w") as fh:
                entry_data = {
                    "findings": [_encode(path, f) for f in findings],
                    "deps": [[dep, _content_hash(dep)] for dep in dependencies],
                }
                json.dump(entry_data, fh, separators=(",", ":"))
            os.replace(tmp, entry)
        except OSError:
            pass  # a read-only tree just means no cache


def _content_hash(path: str) -> str:
    """The sha256 of a file's bytes ("" when it is gone: a dependency deleted is a change too); for a scan of
    the whole project, a digest of its file list with sizes and times."""
    if path.startswith("torchlint-scan:"):  # engine.project.SCAN_DEPENDENCY (not imported: it loads libcst)
        from torchlint.engine.semantic.project import scan_digest

        return scan_digest(path)
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return ""


def clean(directory: Path) -> bool:
    if directory.is_dir():
        shutil.rmtree(directory)
        return True
    return False
