"""The Rule base class: what a rule declares and how it reports.

A rule is a class with its code, docs and VALID/INVALID examples. The runner
instantiates it once per file and calls `visit_<NodeType>` / `leave_<NodeType>`
methods during the engine's single traversal; a rule never walks the tree itself
to find its subjects (it may ask the shared analyses in `self.ctx`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Literal, get_args

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.findings import Applicability, Severity

if TYPE_CHECKING:
    from torchlint.engine.context import FileContext

CODE_RE = re.compile(r"^TL\d{3}$")


# What kind of problem a rule catches; the default selection is decided by it. A string type, as a rule's
# class body spells it (`category = "correctness"`), so mypy checks the spelling where it is written.
Category = Literal[
    "correctness",  # wrong results or a crash
    "security",
    "resource",  # memory or time that leaks
    "performance",
    "modernisation",  # a deprecated or legacy API with a working replacement
    "style",
]
CATEGORIES: tuple[Category, ...] = get_args(Category)

# Reported unless the configuration selects otherwise: what makes training wrong, unsafe, leak or slow.
DEFAULT_CATEGORIES: frozenset[Category] = frozenset({"correctness", "security", "resource", "performance"})


@dataclass(frozen=True)
class Invalid:
    """An INVALID example: code that must give exactly one finding of the rule.

    `line`, `column` and `message`, when given, pin where the finding is and what it
    says. `fixed` is the text after the finding's fix and is required whenever it has
    one (tests/test_rule_examples.py refuses an unpinned fix); `alternatives` pins the
    text after each alternative fix, in order. `torch_version` is the torch release
    the example's project targets.
    """

    source: str
    line: int | None = None
    fixed: str | None = None
    column: int | None = None
    message: str | None = None
    alternatives: tuple[str, ...] = ()
    torch_version: str | None = None


# Node-anchored edits; the runner turns them into text edits once positions exist.
@dataclass(frozen=True)
class Replace:
    node: cst.CSTNode
    new: str | cst.CSTNode


@dataclass(frozen=True)
class InsertBefore:
    """Insert `code` as new statement line(s) before `stmt`, at its indentation."""

    stmt: cst.BaseStatement
    code: str


@dataclass(frozen=True)
class InsertAfter:
    stmt: cst.BaseStatement
    code: str


@dataclass(frozen=True)
class RemoveStatement:
    stmt: cst.BaseStatement


NodeEdit = Replace | InsertBefore | InsertAfter | RemoveStatement


@dataclass(frozen=True)
class NodeFix:
    message: str
    edits: tuple[NodeEdit, ...]
    applicability: Applicability
    risk: str = ""


@dataclass
class Report:
    rule: Rule
    node: cst.CSTNode
    message: str
    fix: NodeFix | None
    alternatives: tuple[NodeFix, ...] = field(default_factory=tuple)
    top: cst.CSTNode | None = None  # the top-level statement being traversed when reported
    severity: Severity | None = None  # this finding's own severity; None: the rule's
    cites: tuple[int, ...] = ()  # lines of this file the message names as `line N`


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    message: ClassVar[str]
    severity: ClassVar[Severity] = Severity.WARNING
    category: ClassVar[Category]  # checked here too, for a rule class made at run time
    summary: ClassVar[str]  # one line, for tables and SARIF shortDescription
    what: ClassVar[str]  # "What it does"
    why: ClassVar[str]  # "Why is this bad?"
    example: ClassVar[str]  # buggy code
    fix_example: ClassVar[str] = ""  # the same code fixed
    fix_safety: ClassVar[str] = ""  # empty: the rule offers no automatic fix
    VALID: ClassVar[list[str]] = []
    INVALID: ClassVar[list[Invalid]] = []
    # Substrings without which the rule cannot fire (e.g. "backward"): a file containing
    # none of them skips the rule, and a file no rule applies to is not even parsed.
    # Empty: always run. tests/engine/test_prefilter.py checks no finding is ever lost.
    requires: ClassVar[tuple[str, ...]] = ()
    # The verdict depends on the torch version (a deprecation, a removal, a changed default): findings
    # in a branch that a version guard never takes on the target torch are dropped (version_guards.py).
    version_sensitive: ClassVar[bool] = False
    # Why a rule of a default category is opt-in all the same: its precision on code nobody tuned it on
    # missed the bar (error 90%, warning 80% right). Empty: the category decides.
    opt_in: ClassVar[str] = ""
    # The shared analyses the rule reads (core/analyses.py), those the engine's helpers it calls read for it
    # included: the context builds each on the first question; tests/engine/test_analysis_registry.py runs
    # the rule with only these.
    analyses: ClassVar[frozenset[Analysis]] = frozenset()

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        code = cls.__dict__.get("code")
        if code is not None and not CODE_RE.match(code):
            raise TypeError(f"{cls.__name__}: bad rule code {code!r}")
        if not all(isinstance(a, Analysis) for a in cls.analyses):
            raise TypeError(f"{cls.__name__}: `analyses` names members of engine.core.analyses.Analysis")
        if code is not None:
            if cls.__dict__.get("category") not in CATEGORIES:
                raise TypeError(f"{cls.__name__}: a rule declares its `category` ({', '.join(CATEGORIES)})")

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx

    @classmethod
    def fixable(cls) -> bool:
        return bool(cls.fix_safety)

    @classmethod
    def by_default(cls) -> bool:
        """In the default selection: a default category, unless the rule is opt-in for its precision."""
        return cls.category in DEFAULT_CATEGORIES and not cls.opt_in

    def report(
        self,
        node: cst.CSTNode,
        message: str | None = None,
        fix: NodeFix | None = None,
        alternatives: tuple[NodeFix, ...] = (),
        severity: Severity | None = None,
        cites: tuple[int, ...] = (),
    ) -> None:
        """`severity` overrides the rule's for this finding (a user's `severity` setting still wins);
        `cites`: the lines the message names as `line N` (in a notebook they become `cell C, line M`)."""
        if self.version_sensitive and not self.ctx.runs_on_target():
            return
        self.ctx.reports.append(
            Report(
                self, node, message or self.message, fix, tuple(alternatives), self.ctx.top_statement, severity, cites
            )
        )


def fix(message: str, *edits: NodeEdit, applicability: Applicability, risk: str = "") -> NodeFix:
    """A fix; every fix says how far it can be trusted (see `Applicability`), and the
    rule's `fix_safety` says why. An unsafe fix says what it may change (`risk`, a few
    words the editor shows in its title: "changes the checkpoint format")."""
    return NodeFix(message, tuple(edits), applicability, risk)


SAFE, UNSAFE, DISPLAY = Applicability.SAFE, Applicability.UNSAFE, Applicability.DISPLAY
