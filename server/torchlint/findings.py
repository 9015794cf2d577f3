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
            "edits": [e.to_json() for e in self.edits],
        }


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
    # Further fixes an editor may offer; `--fix` applies only `fix`.
    alternatives: tuple[Fix, ...] = field(default_factory=tuple)
    # First line of the statement holding the finding (for `# noqa` there).
    statement_line: int = 0
    # Last line of the reported node itself: a loop finding is marked on its header line,
    # but the probe must match observations anywhere in the loop.
    node_end_line: int = 0
    # Lines of the file the message names as `line N` (a notebook names them by cell: notebook.cite_cells).
    cites: tuple[int, ...] = ()

    @property
    def url(self) -> str:
        return DOCS_URL.format(code=self.code)

    def sort_key(self) -> tuple:
        return (self.path, self.line, self.column, self.code)

    def to_json(self) -> dict:
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
            "fix": self.fix.to_json() if self.fix else None,
            "url": self.url,
        }
