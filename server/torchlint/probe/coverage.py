"""Record which lines of the user's script ran, cheaply: only the script's own code pays.

Python 3.12+ has `sys.monitoring`, whose line events can be switched off once a line has been
seen. Before 3.12 the only hook is `sys.settrace`, which calls back into Python on every frame
of every library (torch's module and optimizer code included), and that alone cost more than a
small model's training step. There the script is compiled with a marker call before each of its
statements instead: the library runs untouched and a statement costs one call that looks up a set.
"""

from __future__ import annotations

import ast
import builtins
import sys
from collections.abc import Callable
from types import CodeType, FrameType

_MARK = "__torchlint_line__"  # a builtin while the script runs: the script's namespace stays its own


class LineCoverage:
    def __init__(self, filename: str):
        self.filename = filename
        self._hits: set[int] = set()
        self._spans: dict[int, set[int]] | None = None  # marker line -> the lines it stands for
        self._tool: int | None = None
        self.on_new_line: Callable[[FrameType], None] | None = None  # a line ran for the first time, in this frame

    @property
    def lines(self) -> set[int]:
        if self._spans is None:
            return set(self._hits)
        return {line for hit in self._hits for line in self._spans.get(hit, (hit,))}

    def count(self) -> int:
        """Grows when a line (a statement, before 3.12) runs for the first time."""
        return len(self._hits)

    def compile(self, source: str | bytes) -> CodeType:
        """The script's code object, with statement markers where `sys.monitoring` is missing."""
        if sys.version_info >= (3, 12):
            return compile(source, self.filename, "exec")
        markers = _Markers()
        tree = markers.visit(ast.parse(source, self.filename))
        self._spans = markers.spans
        return compile(ast.fix_missing_locations(tree), self.filename, "exec")

    def start(self, code: CodeType) -> None:
        if self._spans is not None:
            hits = self._hits

            def mark(line: int) -> None:
                if line not in hits:
                    hits.add(line)
                    if self.on_new_line is not None:
                        self.on_new_line(sys._getframe(1))

            setattr(builtins, _MARK, mark)
        elif sys.version_info >= (3, 12):
            self._start_monitoring(code)

    def stop(self) -> None:
        if self._spans is not None:
            if getattr(builtins, _MARK, None) is not None:
                delattr(builtins, _MARK)
        elif self._tool is not None and sys.version_info >= (3, 12):
            m = sys.monitoring
            m.register_callback(self._tool, m.events.LINE, None)
            m.free_tool_id(self._tool)
            self._tool = None

    def _start_monitoring(self, code: CodeType) -> None:
        if sys.version_info < (3, 12):  # callers check it too; this tells the type checker
            return
        m = sys.monitoring
        tool = next((t for t in range(6) if m.get_tool(t) is None), None)
        if tool is None:  # every tool id taken (a debugger, a profiler): no coverage rather than a crash
            return
        self._tool = tool
        m.use_tool_id(tool, "torchlint-probe")
        lines = self._hits

        def on_line(code_obj: CodeType, line: int) -> object:
            lines.add(line)
            if self.on_new_line is not None:
                self.on_new_line(sys._getframe(1))
            return m.DISABLE

        m.register_callback(tool, m.events.LINE, on_line)
        stack = [code]
        while stack:
            c = stack.pop()
            m.set_local_events(tool, c, m.events.LINE)
            stack.extend(k for k in c.co_consts if hasattr(k, "co_code"))


class _Markers(ast.NodeTransformer):
    """`__torchlint_line__(n)` before each statement; `spans[n]` is every line of its header.

    A leading docstring stays first (it is the `__doc__`), and so do `from __future__` imports
    (the compiler requires it): their lines are recorded by the marker that follows them.
    """

    def __init__(self) -> None:
        self.spans: dict[int, set[int]] = {}

    def generic_visit(self, node: ast.AST) -> ast.AST:
        super().generic_visit(node)
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if isinstance(stmts, list) and stmts and isinstance(stmts[0], ast.stmt):
                setattr(node, field, self._marked(stmts, keep_first=isinstance(node, ast.Module)))
        return node

    def _marked(self, stmts: list[ast.stmt], keep_first: bool) -> list[ast.stmt]:
        head: list[ast.stmt] = []
        rest = list(stmts)
        if rest and _is_docstring(rest[0]):
            head.append(rest.pop(0))
        while keep_first and rest and isinstance(rest[0], ast.ImportFrom) and rest[0].module == "__future__":
            head.append(rest.pop(0))
        out = list(head)
        pending = [line for s in head for line in _header_lines(s)]
        for s in rest:
            out += [self._marker(s, pending + _header_lines(s)), s]
            pending = []
        if pending:
            out.append(self._marker(head[-1], pending))
        return out

    def _marker(self, at: ast.stmt, lines: list[int]) -> ast.stmt:
        self.spans.setdefault(at.lineno, set()).update(lines)
        call = ast.Call(ast.Name(_MARK, ast.Load()), [ast.Constant(at.lineno)], [])
        return ast.copy_location(ast.Expr(call), at)


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def _header_lines(stmt: ast.stmt) -> list[int]:
    """The lines a static finding on this statement itself can sit on (not its nested body)."""
    body = getattr(stmt, "body", None)
    end = stmt.end_lineno or stmt.lineno
    if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
        end = body[0].lineno - 1
    first = min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", ()))])
    return list(range(first, max(end, stmt.lineno) + 1))
