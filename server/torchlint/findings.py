"""The values that flow out of the engine: findings, fixes and text edits.

Everything here is plain data with 1-based lines and 1-based columns counted in
Unicode code points, so reporters, the CLI and the language server can share it
without touching libcst.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from torchlint import DOCS_URL


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True, order=True)
class Edit:
    """Replace the text between two positions (end exclusive) with `content`."""

    line: int
    column: int
    end_line: int
    end_column: int
    content: str

    def to_json(self) -> dict:
        return {
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "content": self.content,
        }


class Applicability(str, enum.Enum):
    """How far a fix can be trusted, per fix (as Ruff has it).

    SAFE keeps the behaviour of every program the finding is right about: `--fix`
    and the editor's fix-all apply it. UNSAFE may change behaviour (a checkpoint's
    format, a float where a tensor was, other weights): applied only with
    `--unsafe-fixes`. DISPLAY is a suggestion to review and choose (one of several
    fixes, none proven right): shown, never applied in bulk.
    """

    SAFE = "safe"
    UNSAFE = "unsafe"
    DISPLAY = "display"


@dataclass(frozen=True)
class Fix:
    message: str
    edits: tuple[Edit, ...]
    applicability: Applicability = Applicability.SAFE
    risk: str = ""  # what an unsafe fix may change, for the editor's title ("changes the checkpoint format")

    def applies(self, unsafe: bool) -> bool:
        """Whether `--fix` applies this fix (with `--unsafe-fixes` when `unsafe`)."""
        return self.applicability is Applicability.SAFE or (unsafe and self.applicability is Applicability.UNSAFE)

    def to_json(self) -> dict:
        return {
            "message": self.message,
            "applicability": self.applicability.value,
            "risk": self.risk,
            "edits": [e.to_json() for e in self.edits],
        }


_OFFERED = {Applicability.SAFE: 0, Applicability.UNSAFE: 1, Applicability.DISPLAY: 2}


def in_offered_order(fixes: tuple[Fix | None, ...] | list[Fix | None]) -> list[Fix]:
    """Fixes as they are offered: safe, then unsafe, then display (stable within each)."""
    return sorted((fx for fx in fixes if fx is not None), key=lambda fx: _OFFERED[fx.applicability])


@dataclass
class Finding:
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    code: str
    name: str
    message: str
    severity: Severity
    fix: Fix | None = None
    # Further fixes an editor may offer; `--fix` applies one of them when `fix` is not applicable (applied_fix).
    alternatives: tuple[Fix, ...] = field(default_factory=tuple)
    # First line of the statement holding the finding (for `# noqa` there).
    statement_line: int = 0
    # Last line of the reported node itself: a loop finding is marked on its header line,
    # but the probe must match observations anywhere in the loop.
    node_end_line: int = 0
    # Lines of the file the message names as `line N` (a notebook names them by cell: notebook.cite_cells).
    cites: tuple[int, ...] = ()

    def fixes(self) -> list[Fix]:
        """Its fix and alternatives in the order they are offered (safe, unsafe, display)."""
        return in_offered_order((self.fix, *self.alternatives))

    def applied_fix(self, unsafe: bool) -> Fix | None:
        """The fix `--fix` and the editor's fix-all apply: the first safe one; with `unsafe` (`--unsafe-fixes`),
        the first unsafe one when none is safe. TL105's unsafe `.item()` comes first from the rule, its safe
        `.detach()` second: `--fix` applies the `.detach()`."""
        return next((fx for fx in self.fixes() if fx.applies(unsafe)), None)

    @property
    def url(self) -> str:
        return DOCS_URL.format(code=self.code)

    def sort_key(self) -> tuple:
        return (self.path, self.line, self.column, self.code)

    def to_json(self) -> dict:
        fixes = self.fixes()
        return {
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "code": self.code,
            "name": self.name,
            "message": self.message,
            "severity": self.severity.value,
            "fix": fixes[0].to_json() if fixes else None,
            "alternatives": [fx.to_json() for fx in fixes[1:]],
            "url": self.url,
        }
