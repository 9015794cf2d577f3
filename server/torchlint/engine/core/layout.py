"""How the file is laid out: each statement's indentation, and a statement re-rendered inside a new block.

Fixes that wrap a statement (`with torch.no_grad():` around a loop or an in-place update) need the
statement's indentation, which libcst keeps only on the blocks around it, and the file's newline and
indentation unit. The statements' indentations come from one walk of the blocks, on the first question.
"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.walk import iter_nodes, iter_statements


class Layout:
    def __init__(self, module: cst.Module) -> None:
        self.module = module
        self._indents: dict[int, str] | None = None

    def indent_of(self, stmt: cst.BaseStatement) -> str | None:
        """The indentation of `stmt`'s first line (None: not a statement of an indented block of the file)."""
        if self._indents is None:
            self._indents = _indents(self.module)
        return self._indents.get(id(stmt))

    def wrapped_in(self, header: str, stmt: cst.BaseStatement) -> str | None:
        """The text of `stmt` as the body of `header` (`with torch.no_grad():`), to replace it: its comments
        kept, its trailing comment dropped (None: no safe spelling)."""
        module = self.module
        if any(
            isinstance(n, (cst.SimpleString, cst.FormattedString)) and "\n" in module.code_for_node(n)
            for n in iter_nodes(stmt)
        ):
            return None  # re-indenting would change a multi-line string
        indent = self.indent_of(stmt)
        if indent is None:
            return None
        code = module.code_for_node(stmt.with_changes(leading_lines=()))
        nl = module.default_newline
        if code.endswith(nl):
            code = code[: -len(nl)]
        comment = _last_comment(stmt)
        if comment is not None and code.endswith(comment):
            code = code[: -len(comment)].rstrip(" \t")
        unit = module.default_indent
        lines = [indent + unit + line if line.strip() else line for line in code.split(nl)]
        return header + nl + nl.join(lines)


def _indents(module: cst.Module) -> dict[int, str]:
    """id(statement) -> the indentation of its first line, for every statement of the file, from the
    nesting of indented blocks (ids: the nodes live as long as the module this layout keeps)."""
    found: dict[int, str] = {}
    stack: list[tuple[cst.BaseStatement, str]] = [(s, "") for s in reversed(module.body)]
    while stack:
        stmt, indent = stack.pop()
        found[id(stmt)] = indent
        if not isinstance(stmt, cst.BaseCompoundStatement):
            continue
        suites = [
            stmt.body,
            *(h.body for h in getattr(stmt, "handlers", ())),
            *(c.body for c in getattr(stmt, "cases", ())),
        ]
        orelse, final = getattr(stmt, "orelse", None), getattr(stmt, "finalbody", None)
        if isinstance(orelse, cst.If):
            stack.append((orelse, indent))  # `elif` sits at the `if`'s indentation
        elif orelse is not None:
            suites.append(orelse.body)
        if final is not None:
            suites.append(final.body)
        for suite in reversed(suites):
            if isinstance(suite, cst.IndentedBlock):
                inner = indent + (suite.indent if suite.indent is not None else module.default_indent)
                stack.extend((s, inner) for s in reversed(suite.body))
    return found


def _last_comment(stmt: cst.BaseStatement) -> str | None:
    """The trailing comment of the compound statement's last line, as rendered."""
    last = None
    for s in iter_statements([stmt], into_functions=True):
        if isinstance(s, cst.SimpleStatementLine):
            last = s.trailing_whitespace
        elif isinstance(s, cst.BaseCompoundStatement) and isinstance(s.body, cst.SimpleStatementSuite):
            last = s.body.trailing_whitespace
    return last.comment.value if last is not None and last.comment is not None else None
