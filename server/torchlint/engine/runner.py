"""Lint one file: one parse, one traversal dispatching to every enabled rule.

Positions are expensive in libcst (a full code generation pass), so they are
computed only for files that produced findings.
"""

from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass, field

import libcst as cst

from torchlint import noqa
from torchlint.engine import rule as R
from torchlint.engine.context import FileContext
from torchlint.engine.node_positions import positions as node_positions
from torchlint.engine.source import Source, SourceError, decode, nesting_error, split_lines
from torchlint.engine.walk import traverse
from torchlint.findings import Edit, Finding, Fix, Severity

PARSE_ERROR_CODE = "TL000"


@dataclass
class LintResult:
    findings: list[Finding]
    module: cst.Module | None = None
    errors: list[str] = field(default_factory=list)


def error_finding(path: str, message: str, line: int = 1, column: int = 1) -> Finding:
    return Finding(
        path,
        line,
        column,
        line,
        column,
        PARSE_ERROR_CODE,
        "parse-error",
        message,
        Severity.ERROR,
        statement_line=line,
    )


_DISPATCH: dict[type, dict[type, list[str]]] = {}


def _dispatch_table(rule_cls: type[R.Rule]) -> dict[type, list[str]]:
    """node type -> names of the rule's visit_/leave_ methods for it."""
    table = _DISPATCH.get(rule_cls)
    if table is None:
        table = {}
        for attr in dir(rule_cls):
            prefix, _, node_name = attr.partition("_")
            if prefix in ("visit", "leave") and node_name and hasattr(cst, node_name):
                table.setdefault((prefix, getattr(cst, node_name)), []).append(attr)
        _DISPATCH[rule_cls] = table
    return table


def parse(path: str, text: str, parser=None) -> cst.Module | Finding:
    """`parser`: e.g. an incremental.ChunkParser's parse (the language server's); default libcst's."""
    too_deep = nesting_error(text)
    if too_deep is not None:
        return error_finding(path, too_deep.message, too_deep.line, too_deep.column)
    try:
        return (parser or cst.parse_module)(text)
    except cst.ParserSyntaxError as exc:
        return error_finding(path, f"syntax error: {exc.message}", exc.raw_line, exc.raw_column + 1)
    except RecursionError:
        return error_finding(path, "expression nested too deeply for the parser")
    except Exception as exc:  # libcst raises a few other types on odd input
        return error_finding(path, f"cannot parse: {exc}")


def applicable(rules: list[type[R.Rule]], text: str) -> list[type[R.Rule]]:
    """The rules whose `requires` text occurs in the file (cheap, before parsing)."""
    return [r for r in rules if not r.requires or any(s in text for s in r.requires)]


def _compiles(path: str, text: str) -> bool:
    """A cheap syntax check with CPython's own parser (~10x faster than libcst)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, path, "exec", ast.PyCF_ONLY_AST)
        return True
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return False


def lint_text(path: str, text: str, rules: list[type[R.Rule]], *, prefilter: bool = True, parser=None) -> LintResult:
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
    ctx = FileContext(path, text, module)
    visits: dict[type, list] = {}
    leaves: dict[type, list] = {}
    for rule_cls in rules:
        instance = rule_cls(ctx)
        for (prefix, node_type), names in _dispatch_table(rule_cls).items():
            target = visits if prefix == "visit" else leaves
            target.setdefault(node_type, []).extend((instance, getattr(instance, n)) for n in names)

    errors: list[str] = []
    failed: set = set()

    def call(handlers, node) -> None:
        for instance, fn in handlers:
            if instance in failed:
                continue
            try:
                fn(node)
            except Exception as exc:  # one broken rule must not cost the others
                failed.add(instance)
                errors.append(f"{instance.code}: {type(exc).__name__}: {exc}")

    sem = ctx.semantics
    tops = set(module.body)

    def enter(node):
        t = type(node)
        if node in tops:
            ctx.top_statement = node
        if t is cst.FunctionDef or t is cst.ClassDef or t is cst.Module:
            ctx.scope = sem.scope_for(node, ctx.scope)
            (ctx.functions if t is cst.FunctionDef else ctx.classes if t is cst.ClassDef else []).append(node)
        elif t is cst.For or t is cst.While:
            ctx.loops.append(node)
        elif t is cst.With:
            ctx.withs.append(node)
        handlers = visits.get(t)
        if handlers:
            call(handlers, node)

    def leave(node):
        t = type(node)
        handlers = leaves.get(t)
        if handlers:
            call(handlers, node)
        if t is cst.FunctionDef or t is cst.ClassDef or t is cst.Module:
            ctx.scope = ctx.scope.parent
            if t is cst.FunctionDef:
                ctx.functions.pop()
            elif t is cst.ClassDef:
                ctx.classes.pop()
        elif t is cst.For or t is cst.While:
            ctx.loops.pop()
        elif t is cst.With:
            ctx.withs.pop()

    traverse(module, enter, leave)
    kept = noqa.suppress(text, _to_findings(ctx, path, text, module) if ctx.reports else [])
    kept.extend(error_finding(path, f"internal error in rule {e}") for e in errors)  # never silenced
    kept.sort(key=Finding.sort_key)
    return LintResult(kept, module, errors)


def _node_positions(ctx: FileContext, module: cst.Module) -> dict:
    """Ranges of every node a report or fix mentions (only their statements are generated)."""
    wanted = [r.node for r in ctx.reports]
    for r in ctx.reports:
        for f in (r.fix, *r.alternatives):
            if f is not None:
                wanted.extend(getattr(e, "node", None) or e.stmt for e in f.edits)
    tops = {r.top for r in ctx.reports}
    if None not in tops:
        ranges = node_positions(module, tops)
        if all(n in ranges for n in wanted):
            return ranges
    return node_positions(module)  # a rule reported a node outside the statement it was visiting


def _to_findings(ctx: FileContext, path: str, text: str, module: cst.Module) -> list[Finding]:
    positions = _node_positions(ctx, module)
    lines = split_lines(text)  # only used for indentation of inserted lines
    statements = None
    if "noqa" in text:
        statements = sorted(
            (start[0], end[0])
            for n, (start, end) in positions.items()
            if isinstance(n, (cst.SimpleStatementLine, cst.BaseCompoundStatement))
        )
    out = []
    seen = set()
    for rep in ctx.reports:
        r = positions.get(rep.node)
        if r is None:
            continue
        (line, col), (end_line, end_col) = r
        node_end_line = end_line
        if isinstance(rep.node, cst.BaseCompoundStatement) and line - 1 < len(lines):
            # a loop/def/with reported as a whole: mark its header line, not its whole body
            end_line, end_col = line, len(lines[line - 1].rstrip())
        key = (rep.rule.code, line, col, rep.message)
        if key in seen:
            continue
        seen.add(key)
        stmt_line = line
        if statements is not None:
            containing = [s for s, e in statements if s <= line <= e]
            stmt_line = max(containing) if containing else line
        fix = _to_fix(rep.fix, positions, lines, module) if rep.fix else None
        alternatives = tuple(f for f in (_to_fix(a, positions, lines, module) for a in rep.alternatives) if f)
        out.append(
            Finding(
                path,
                line,
                col + 1,
                end_line,
                end_col + 1,
                rep.rule.code,
                rep.rule.name,
                rep.message,
                rep.severity or rep.rule.severity,
                fix,
                alternatives,
                stmt_line,
                node_end_line,
            )
        )
    return out


def _to_fix(nf: R.NodeFix, positions, lines: list[str], module: cst.Module) -> Fix | None:
    edits = []
    nl = module.default_newline
    for e in nf.edits:
        r = positions.get(e.node if isinstance(e, R.Replace) else e.stmt)
        if r is None:
            return None
        (line, col), (end_line, end_col) = r
        if isinstance(e, R.Replace):
            content = e.new if isinstance(e.new, str) else module.code_for_node(e.new)
            edits.append(Edit(line, col + 1, end_line, end_col + 1, content))
            continue
        indent = lines[line - 1][:col] if line - 1 < len(lines) else ""
        if indent.strip():  # statement shares its line with other code: no line edits
            return None
        if isinstance(e, R.RemoveStatement):
            edits.append(Edit(line, 1, end_line + 1, 1, ""))
        else:
            content = "".join(indent + part + nl for part in e.code.splitlines())
            at = line if isinstance(e, R.InsertBefore) else end_line + 1
            edits.append(Edit(at, 1, at, 1, content))
    return Fix(nf.message, tuple(edits))


def lint_bytes(path: str, data: bytes, rules) -> tuple[LintResult, Source | None]:
    """Decode then lint; returns the decoded Source too (None if undecodable)."""
    try:
        source = decode(data)
    except SourceError as exc:
        return LintResult([error_finding(path, exc.message, exc.line, exc.column)]), None
    return lint_text(path, source.text, rules), source
