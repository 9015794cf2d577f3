"""Attribute runtime events to the user's source line by walking the live frames.

`sys._getframe()` plus a per-filename cache costs about a microsecond per event;
`traceback.extract_stack` costs a hundred times more.
"""

from __future__ import annotations

import itertools
import linecache
import os
import sys
import sysconfig
from dataclasses import dataclass, field
from types import CodeType, FrameType, TracebackType

from torchlint.probe.json_types import SiteJson

PROBE_DIR = os.path.dirname(os.path.abspath(__file__))
# The file `--nproc-per-node` hands to PyTorch's launcher: the probe's own code, never the user's.
BOOT_FILE = "torchlint_probe_boot.py"
# Frames of the mode machinery itself: never a useful "via".
_PLUMBING = ("overrides.py", "_python_dispatch.py", "_tensor.py", "_ops.py", "hooks.py", "eval_frame.py")


def _library_roots() -> tuple[str, ...]:
    roots = {PROBE_DIR}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            roots.add(os.path.realpath(path))
    for path in sys.path:
        if path.rstrip("/").endswith(("site-packages", "dist-packages")):
            roots.add(os.path.realpath(path))
    return tuple(sorted(roots))


@dataclass(frozen=True)
class Site:
    path: str
    line: int
    via: str | None = None  # the library function that did it, when not the user
    # The user frames that called this line, innermost first (a custom module's `forward` line is
    # reached from the training loop's `model(x)`): a static finding on any of them is the same problem.
    callers: tuple[tuple[str, int], ...] = field(default=(), compare=False)
    # The frame's code and its last instruction: where on the line it was, which `span` works out
    # only for an observation (the editor marks the expression, not the whole line).
    code: CodeType | None = field(default=None, compare=False, repr=False)
    lasti: int = field(default=-1, compare=False, repr=False)

    def key(self) -> tuple[str, int]:
        return (self.path, self.line)

    def to_json(self) -> SiteJson:
        return {"path": self.path, "line": self.line}

    def span(self) -> tuple[int, int, int, int] | None:
        """The 1-based (line, column, end line, end column) of the expression the frame was evaluating,
        columns in code points; None before Python 3.11, or when the expression does not start on `line`."""
        positions = getattr(self.code, "co_positions", None)  # Python 3.11+
        if positions is None or self.lasti < 0:
            return None
        pos = next(itertools.islice(positions(), self.lasti // 2, None), None)
        if pos is None or None in pos or pos[0] != self.line:
            return None
        line, end_line, col, end_col = pos
        return (line, _chars(self.path, line, col) + 1, end_line, _chars(self.path, end_line, end_col) + 1)

    def stack(self) -> list[SiteJson]:
        """The user's call chain as JSON, innermost first, this line included."""
        return [{"path": p, "line": n} for p, n in (self.key(), *self.callers)]


def _chars(path: str, line: int, offset: int) -> int:
    """A UTF-8 byte offset into `line` of `path` (what co_positions gives) as a code-point count."""
    text = linecache.getline(path, line)
    return len(text.encode("utf-8")[:offset].decode("utf-8", "replace")) if text else offset


class Attributor:
    """Finds the first frame in user code: outside torch, the stdlib, site-packages and the probe."""

    def __init__(self, extra_library_roots: tuple[str, ...] = ()) -> None:
        self._roots = _library_roots() + tuple(os.path.realpath(r) for r in extra_library_roots)
        self._cache: dict[str, bool] = {}
        self._real: dict[str, str] = {}

    def is_user(self, filename: str) -> bool:
        user = self._cache.get(filename)
        if user is None:
            if filename.startswith("<") or os.path.basename(filename) == BOOT_FILE:
                user = False
            else:
                real = os.path.realpath(filename)
                self._real[filename] = real
                user = not any(real == r or real.startswith(r + os.sep) for r in self._roots)
            self._cache[filename] = user
        return user

    def real(self, filename: str) -> str:
        return self._real.get(filename) or os.path.realpath(filename)

    def site(self, via: bool = False, callers: bool = False) -> Site | None:
        """The user's line for the current event; with `via` the library function in between, with
        `callers` the user frames further out (costs a walk to the bottom of the stack: observations only)."""
        frame: FrameType | None = sys._getframe(1)
        library: str | None = None
        while frame is not None:
            code = frame.f_code
            name = code.co_filename
            if self.is_user(name):
                caller_sites = self._callers(frame.f_back) if callers else ()
                return Site(self.real(name), frame.f_lineno, library, caller_sites, code, frame.f_lasti)
            if library is None and via and not name.startswith(PROBE_DIR) and not name.endswith(_PLUMBING):
                module = frame.f_globals.get("__name__", "?")
                library = f"{module}.{getattr(code, 'co_qualname', code.co_name)}"
            frame = frame.f_back
        return None

    def _callers(self, frame: FrameType | None) -> tuple[tuple[str, int], ...]:
        found = []
        while frame is not None:
            name = frame.f_code.co_filename
            if self.is_user(name):
                found.append((self.real(name), frame.f_lineno))
            frame = frame.f_back
        return tuple(found)

    def frames(self, tb: TracebackType | None) -> list[tuple[str, int]]:
        """The user frames of a traceback, innermost first."""
        import traceback

        return [
            (self.real(f.f_code.co_filename), n)
            for f, n in reversed(list(traceback.walk_tb(tb)))
            if self.is_user(f.f_code.co_filename)
        ]

    def called_from_user(self, tb: TracebackType | None) -> str:
        """What the innermost user frame of a traceback called: the library function (`module.qualname`),
        or the user's source line when the error came straight from C."""
        import traceback

        frames = [f for f, _n in traceback.walk_tb(tb)]
        last = max((i for i, f in enumerate(frames) if self.is_user(f.f_code.co_filename)), default=None)
        if last is None:
            return "?"
        for f in frames[last + 1 :]:
            name = f.f_code.co_filename
            if not name.startswith(PROBE_DIR) and not name.endswith(_PLUMBING):
                name = f"{f.f_globals.get('__name__', '?')}.{getattr(f.f_code, 'co_qualname', f.f_code.co_name)}"
                return name.removesuffix(".__new__").removesuffix(".__init__")
        user = frames[last]
        return linecache.getline(user.f_code.co_filename, user.f_lineno).strip() or "?"

    def caller_is_library(self) -> bool:
        """Whether the nearest frame that is neither probe code nor mode plumbing is library code."""
        frame: FrameType | None = sys._getframe(1)
        while frame is not None:
            name = frame.f_code.co_filename
            if not name.startswith(PROBE_DIR) and not name.endswith(_PLUMBING):
                return not self.is_user(name)
            frame = frame.f_back
        return False
