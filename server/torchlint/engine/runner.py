"""Lint one file: one parse, one traversal dispatching to every enabled rule.

Positions are expensive in libcst (a full code generation pass), so they are
computed only for files that produced findings.
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, cast

import libcst as cst

from torchlint import noqa
from torchlint.engine.context import FileContext
from torchlint.engine.core.analyses import members as analysis_members
from torchlint.engine.core.fix_check import keeps_parse
from torchlint.engine.core.node_positions import Range
from torchlint.engine.core.node_positions import positions as node_positions
from torchlint.engine.core.source import Source, SourceError, decode, split_lines, syntax_error
from torchlint.engine.core.walk import children, dispatch, forget_children
from torchlint.engine.rule import InsertBefore, NodeFix, RemoveStatement, Replace, Rule
from torchlint.engine.semantic import call_sites
from torchlint.engine.semantic.project import recording
from torchlint.engine.semantic.semantics import Scope
from torchlint.findings import Edit, Finding, Fix, Severity

PARSE_ERROR_CODE = "TL000"


class Parser(Protocol):
    """How text becomes a tree: CPython's verdict first, then libcst. The language server's
    incremental.ChunkParser answers both from the chunks an edit left unchanged, and keeps the call
    index's parts for the statements it hands back again."""

    call_site_parts: call_sites.Parts

    def syntax_error(self, text: str) -> SourceError | None: ...

    def parse(self, text: str) -> cst.Module: ...


@dataclass
class LintResult:
    findings: list[Finding]
    module: cst.Module | None = None
    errors: list[str] = field(default_factory=list)
    dependencies: tuple[str, ...] = ()  # other project files the findings were derived from


def error_finding(
    path: str, message: str, line: int = 1, column: int = 1, end_line: int = 0, end_column: int = 0
) -> Finding:
    return Finding(
        path,
        line,
        column,
        end_line or line,
        end_column or column,
        PARSE_ERROR_CODE,
        "parse-error",
        message,
        Severity.ERROR,
        statement_line=line,
    )


def source_error_finding(path: str, exc: SourceError) -> Finding:
    return error_finding(path, exc.message, exc.line, exc.column, exc.end_line, exc.end_column)


_DispatchTable = dict[tuple[str, type[cst.CSTNode]], list[str]]  # ("visit"/"leave", node type) -> method names
_DISPATCH: dict[type[Rule], _DispatchTable] = {}  # built once per rule class
# Nodes that open a scope, a loop, a `with` block, an `if` or an indented block, and the statement line:
# the traversal state the context keeps.
_TRACKED: frozenset[type[cst.CSTNode]] = frozenset(
    {
        cst.Module,
        cst.ClassDef,
        cst.FunctionDef,
        cst.For,
        cst.While,
        cst.With,
        cst.If,
        cst.IndentedBlock,
        cst.SimpleStatementLine,
    }
)
_Handlers = list[tuple[Rule, Callable[[cst.CSTNode], object]]]  # (rule, its bound visit_/leave_ method)


def _dispatch_table(rule_cls: type[Rule]) -> _DispatchTable:
    """(prefix, node type) -> names of the rule's visit_/leave_ methods for it."""
    table = _DISPATCH.get(rule_cls)
    if table is None:
        table = {}
        for attr in dir(rule_cls):
            prefix, _, node_name = attr.partition("_")
            if prefix in ("visit", "leave") and node_name and hasattr(cst, node_name):
                table.setdefault((prefix, getattr(cst, node_name)), []).append(attr)
        _DISPATCH[rule_cls] = table
    return table


def parse(path: str, text: str, parser: Parser | None = None) -> cst.Module | Finding:
    """`parser`: e.g. an incremental.ChunkParser (the language server's); default CPython's check and libcst.

    Text CPython refuses still goes to libcst, which may know newer grammar than
    the running Python; when libcst refuses it too, the error is reported where
    and as CPython says (libcst's position is where its parser gave up).
    """
    refused = parser.syntax_error(text) if parser is not None else syntax_error(text)
    if refused is not None and refused.too_deep:
        return source_error_finding(path, refused)
    try:
        return parser.parse(text) if parser is not None else cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        if refused is not None:
            return source_error_finding(path, refused)
        return error_finding(path, f"syntax error: {exc.message}", exc.raw_line, exc.raw_column + 1)
    except RecursionError:
        return error_finding(path, "expression nested too deeply for the parser")
    except Exception as exc:  # libcst raises a few other types on odd input
        return error_finding(path, f"cannot parse: {exc}")


def applicable(rules: Sequence[type[Rule]], text: str) -> list[type[Rule]]:
    """The rules whose `requires` text occurs in the file (cheap, before parsing).

    A required text without whitespace occurs in the file exactly when it occurs in one of the file's
    whitespace-separated chunks, so it is looked for in the distinct chunks only (about half the text:
    a file repeats its names), and a hundred or so texts are looked for in every file."""
    chunks: str | None = None
    found: dict[str, bool] = {}  # rules share required texts
    out = []
    for r in rules:
        if not r.requires:
            out.append(r)
            continue
        if chunks is None:
            chunks = "\n".join(set(text.split()))
        for s, spaced in _required(r):
            known = found.get(s)
            if known is None:
                known = found[s] = s in (text if spaced else chunks)
            if known:
                out.append(r)
                break
    return out


_REQUIRED: dict[type[Rule], tuple[tuple[str, bool], ...]] = {}


def _required(rule: type[Rule]) -> tuple[tuple[str, bool], ...]:
    """The rule's `requires`, each with whether it holds whitespace (then it is looked for in the text)."""
    found = _REQUIRED.get(rule)
    if found is None:
        found = _REQUIRED[rule] = tuple((s, any(c.isspace() for c in s)) for s in rule.requires)
    return found


def _compiles(path: str, text: str) -> bool:
    """A cheap syntax check with CPython's own parser (~10x faster than libcst)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, path, "exec", ast.PyCF_ONLY_AST)
        return True
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return False


def lint_text(
    path: str,
    text: str,
    rules: Sequence[type[Rule]],
    *,
    prefilter: bool = True,
    parser: Parser | None = None,
    torch_version: str | None = None,
    only_declared: bool = False,
    asked: set[str] | None = None,
) -> LintResult:
    """Lint `text`; `torch_version` is the target its settings resolved (config.ConfigResolver.resolve),
    else the project's own is used (tests and examples give one too). `only_declared`: a rule asking for a
    shared analysis none of `rules` declares (`Rule.analyses`) fails; `asked` collects the analyses asked
    for (FileContext members)."""
    if prefilter:
        rules = applicable(rules, text)
        if not rules and _compiles(path, text):
            return LintResult([])  # nothing can fire: skip libcst entirely
    parsed = parse(path, text, parser)
    if isinstance(parsed, Finding):
        return LintResult([parsed])
    module = parsed
    if not rules:
        return LintResult([], module)
    ctx = FileContext(path, text, module, torch_version, parser.call_site_parts if parser is not None else None)
    if only_declared:
        ctx.allowed = analysis_members(a for r in rules for a in r.analyses)
    ctx.asked = asked
    visits: dict[type[cst.CSTNode], _Handlers] = {}
    leaves: dict[type[cst.CSTNode], _Handlers] = {}
    for rule_cls in rules:
        instance = rule_cls(ctx)
        for (prefix, node_type), names in _dispatch_table(rule_cls).items():
            target = visits if prefix == "visit" else leaves
            target.setdefault(node_type, []).extend((instance, getattr(instance, n)) for n in names)

    errors: list[str] = []
    failed: set[Rule] = set()

    def call(handlers: _Handlers, node: cst.CSTNode) -> None:
        for instance, method in handlers:
            if instance in failed:
                continue
            try:
                method(node)
            except Exception as exc:  # one broken rule must not cost the others
                failed.add(instance)
                errors.append(f"{instance.code}: {type(exc).__name__}: {exc}")

    outer_scopes: list[Scope | None] = []  # the scope each open def, class or module was entered from

    def push(node: cst.CSTNode) -> None:
        node_type = type(node)
        if node_type is cst.SimpleStatementLine:
            ctx.statement = cast(cst.SimpleStatementLine, node)
        elif node_type is cst.IndentedBlock:
            ctx.blocks.append(cast(cst.IndentedBlock, node).body)
        elif node_type is cst.If:
            ctx.ifs.append(cast(cst.If, node))
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Module)):
            outer_scopes.append(ctx.scope)
            ctx.scope = semantics.scope_for(node, ctx.scope)
            if isinstance(node, cst.FunctionDef):
                ctx.functions.append(node)
                ctx.loops_at_function.append(len(ctx.loops))
            elif isinstance(node, cst.ClassDef):
                ctx.classes.append(node)
        elif isinstance(node, (cst.For, cst.While)):
            ctx.loops.append(node)
        elif isinstance(node, cst.With):
            ctx.withs.append(node)

    def pop(node: cst.CSTNode) -> None:
        node_type = type(node)
        if node_type is cst.SimpleStatementLine:
            ctx.statement = None
        elif node_type is cst.IndentedBlock:
            ctx.blocks.pop()
        elif node_type is cst.If:
            ctx.ifs.pop()
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Module)):
            ctx.scope = outer_scopes.pop()  # not the cached Scope's parent: an analysis may have made it first
            if isinstance(node, cst.FunctionDef):
                ctx.functions.pop()
                ctx.loops_at_function.pop()
            elif isinstance(node, cst.ClassDef):
                ctx.classes.pop()
        elif isinstance(node, (cst.For, cst.While)):
            ctx.loops.pop()
        elif isinstance(node, cst.With):
            ctx.withs.pop()

    def enter(node: cst.CSTNode) -> None:
        node_type = type(node)
        if node_type in _TRACKED:
            push(node)
        handlers = visits.get(node_type)
        if handlers:
            call(handlers, node)

    def leave(node: cst.CSTNode) -> None:
        node_type = type(node)
        handlers = leaves.get(node_type)
        if handlers:
            call(handlers, node)
        if node_type in _TRACKED:
            pop(node)

    try:
        with recording(ctx.read):  # from the first analysis on: the semantics reads other files' classes
            semantics = ctx.semantics
            # Only the nodes some rule visits or leaves, or whose traversal state the context keeps, are
            # entered or left; the module's own statements are walked one by one (the top statement).
            entered = frozenset(visits).union(_TRACKED)
            left = frozenset(leaves).union(_TRACKED)
            enter(module)
            for statement in children(module):
                ctx.top_statement = statement
                dispatch(statement, enter, leave, entered, left)
            leave(module)
            kept = noqa.suppress(text, _to_findings(ctx, path, text, module) if ctx.reports else [])
        dependencies = ctx.dependencies()
    finally:
        forget_children()
        visits.clear()  # the rules, and through them the context
        leaves.clear()
        ctx.release()
    kept.extend(error_finding(path, f"internal error in rule {e}") for e in errors)  # never silenced
    kept.sort(key=Finding.sort_key)
    return LintResult(kept, module, errors, dependencies)


def _node_positions(ctx: FileContext, module: cst.Module, outline: list[tuple[int, int]]) -> dict[cst.CSTNode, Range]:
    """Ranges of every node a report or fix mentions (only their statements are generated), and the
    lines of every top-level statement into `outline`."""
    wanted = [report.node for report in ctx.reports]
    for report in ctx.reports:
        for node_fix in (report.fix, *report.alternatives):
            if node_fix is not None:
                wanted.extend(edit.node if isinstance(edit, Replace) else edit.stmt for edit in node_fix.edits)
    top_statements = {report.top for report in ctx.reports if report.top is not None}
    if all(report.top is not None for report in ctx.reports):
        ranges = node_positions(module, top_statements, outline)
        if all(n in ranges for n in wanted):
            return ranges
        outline.clear()
    return node_positions(module, outline=outline)  # a rule reported a node outside the statement it was visiting


def _to_findings(ctx: FileContext, path: str, text: str, module: cst.Module) -> list[Finding]:
    outline: list[tuple[int, int]] = []
    positions = _node_positions(ctx, module, outline)
    lines = split_lines(text)  # only used for indentation of inserted lines
    statements: list[tuple[int, int]] | None = None  # (first, last) line of every statement
    if "noqa" in text:
        statements = sorted(
            (start[0], end[0])
            for n, (start, end) in positions.items()
            if isinstance(n, (cst.SimpleStatementLine, cst.BaseCompoundStatement))
        )
    out: list[Finding] = []
    seen: set[tuple[str, int, int, str]] = set()
    for report in ctx.reports:
        span = positions.get(report.node)
        if span is None:
            continue
        (line, col), (end_line, end_col) = span
        node_end_line = end_line
        if isinstance(report.node, cst.BaseCompoundStatement) and line - 1 < len(lines):
            # a loop/def/with reported as a whole: mark its header line, not its whole body
            end_line, end_col = line, len(lines[line - 1].rstrip())
        key = (report.rule.code, line, col, report.message)
        if key in seen:
            continue
        seen.add(key)
        stmt_line = line
        if statements is not None:
            containing = [s for s, e in statements if s <= line <= e]
            stmt_line = max(containing) if containing else line
        fix = _checked(_to_fix(report.fix, positions, lines, module), text, outline) if report.fix else None
        alternatives = tuple(
            f for f in (_checked(_to_fix(a, positions, lines, module), text, outline) for a in report.alternatives) if f
        )
        out.append(
            Finding(
                path,
                line,
                col + 1,
                end_line,
                end_col + 1,
                report.rule.code,
                report.rule.name,
                report.message,
                report.severity or report.rule.severity,
                fix,
                alternatives,
                stmt_line,
                node_end_line,
                report.cites,
            )
        )
    return out


def _checked(fix: Fix | None, text: str, outline: list[tuple[int, int]]) -> Fix | None:
    """The fix, or None when its edits do not re-parse or change statements they do not touch:
    dropped here, once for every rule, so no output (fix, diff, editor) ever offers it."""
    return fix if fix is not None and keeps_parse(text, fix.edits, outline) else None


def _to_fix(node_fix: NodeFix, positions: dict[cst.CSTNode, Range], lines: list[str], module: cst.Module) -> Fix | None:
    edits: list[Edit] = []
    newline = module.default_newline
    for edit in node_fix.edits:
        span = positions.get(edit.node if isinstance(edit, Replace) else edit.stmt)
        if span is None:
            return None
        (line, col), (end_line, end_col) = span
        if isinstance(edit, Replace):
            content = edit.new if isinstance(edit.new, str) else module.code_for_node(edit.new)
            edits.append(Edit(line, col + 1, end_line, end_col + 1, content))
            continue
        indent = lines[line - 1][:col] if line - 1 < len(lines) else ""
        if indent.strip():  # statement shares its line with other code: no line edits
            return None
        if isinstance(edit, RemoveStatement):
            edits.append(Edit(line, 1, end_line + 1, 1, ""))
        else:
            content = "".join(indent + part + newline for part in edit.code.splitlines())
            at = line if isinstance(edit, InsertBefore) else end_line + 1
            if at > len(lines):  # after the last line of a file without a final newline: end that line first
                end = len(lines[-1]) + 1
                edits.append(Edit(len(lines), end, len(lines), end, newline + content))
                continue
            edits.append(Edit(at, 1, at, 1, content))
    return Fix(node_fix.message, tuple(edits), node_fix.applicability, node_fix.risk)


def lint_bytes(
    path: str, data: bytes, rules: Sequence[type[Rule]], *, torch_version: str | None = None
) -> tuple[LintResult, Source | None]:
    """Decode then lint; returns the decoded Source too (None if undecodable)."""
    try:
        source = decode(data)
    except SourceError as exc:
        return LintResult([source_error_finding(path, exc)]), None
    return lint_text(path, source.text, rules, torch_version=torch_version), source
