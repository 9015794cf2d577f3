"""Version guards: what an `if` on the torch version says about the code under it.

`if version.parse(torch.__version__) < version.parse("1.11"):` guards code written for old
releases: on the torch the project targets (2.x) that branch never runs, so an API it calls that
2.x deprecated or removed is no finding, and a fix written for 2.x would break exactly the
releases the branch exists for. Rules whose verdict depends on the torch version declare it
(`Rule.version_sensitive`) and the engine drops their findings in such branches.

Read forms: `torch.__version__` itself or wrapped in `packaging.version.parse` / `Version` /
`LooseVersion` / `StrictVersion`, compared with a version string (or the same wrappers around
one) or an int tuple; `not`, `and`, `or`; a module-level name assigned such a test
(`TORCH_GE_2 = ...`). Anything else is unknown, and unknown guards nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import libcst as cst

from torchlint.engine.core.callargs import string_value
from torchlint.engine.semantic.target_version import parse_version

_VERSION = "torch.__version__"
_WRAPPERS = frozenset(
    {
        "packaging.version.parse",
        "packaging.version.Version",
        "distutils.version.LooseVersion",
        "distutils.version.StrictVersion",
        "pkg_resources.parse_version",
        "looseversion.LooseVersion",
    }
)
_COMPARE: dict[type[cst.BaseCompOp], Callable[[tuple[int, ...], tuple[int, ...]], bool]] = {
    cst.LessThan: lambda a, b: a < b,
    cst.LessThanEqual: lambda a, b: a <= b,
    cst.GreaterThan: lambda a, b: a > b,
    cst.GreaterThanEqual: lambda a, b: a >= b,
    cst.Equal: lambda a, b: a == b,
    cst.NotEqual: lambda a, b: a != b,
}

Qualname = Callable[[cst.BaseExpression], str | None]


class VersionGuards:
    """Evaluates guards at the target torch (major, minor): True, False, or None when unknown."""

    def __init__(self, target: tuple[int, int], qualname: Qualname, assigned: dict[str, cst.BaseExpression]) -> None:
        self.target = target
        self.qualname = qualname
        self.assigned = assigned  # module-level names assigned once: `TORCH_GE_2 = ...`

    def holds(self, test: cst.BaseExpression, depth: int = 0) -> bool | None:
        if depth > 4:
            return None
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            inner = self.holds(test.expression, depth + 1)
            return None if inner is None else not inner
        if isinstance(test, cst.BooleanOperation):
            left, right = self.holds(test.left, depth + 1), self.holds(test.right, depth + 1)
            if isinstance(test.operator, cst.And):
                return False if False in (left, right) else (True if left and right else None)
            return True if True in (left, right) else (False if left is False and right is False else None)
        if isinstance(test, cst.Name) and test.value in self.assigned:
            return self.holds(self.assigned[test.value], depth + 1)
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
            return self._compare(test.left, test.comparisons[0].operator, test.comparisons[0].comparator)
        return None

    def _compare(self, left: cst.BaseExpression, op: cst.BaseCompOp, right: cst.BaseExpression) -> bool | None:
        compare = _COMPARE.get(type(op))
        if compare is None:
            return None
        if self._is_version(left):
            bound = self._literal(right)
            flipped = False
        elif self._is_version(right):
            bound, flipped = self._literal(left), True
        else:
            return None
        if bound is None:
            return None
        # The target is a release series (2.4 = 2.4.x): a bound inside it (2.4.1) is not decided by it.
        if len(bound) > 2 and bound[:2] == self.target and any(bound[2:]):
            return None
        here = self.target + (0,) * (len(bound) - 2) if len(bound) > 2 else self.target[: len(bound)]
        return compare(bound, here) if flipped else compare(here, bound)

    def _is_version(self, expr: cst.BaseExpression) -> bool:
        if self.qualname(expr) == _VERSION:
            return True
        if isinstance(expr, cst.Call) and self.qualname(expr.func) in _WRAPPERS and len(expr.args) == 1:
            return self._is_version(expr.args[0].value)
        return (
            isinstance(expr, cst.Name) and expr.value in self.assigned and self._is_version(self.assigned[expr.value])
        )

    def _literal(self, expr: cst.BaseExpression) -> tuple[int, ...] | None:
        if isinstance(expr, cst.Call) and self.qualname(expr.func) in _WRAPPERS and len(expr.args) == 1:
            return self._literal(expr.args[0].value)
        if isinstance(expr, cst.Tuple) and expr.elements:
            values = [e.value for e in expr.elements]
            if all(isinstance(v, cst.Integer) for v in values):
                return tuple(int(v.value) for v in values if isinstance(v, cst.Integer))
            return None
        text = string_value(expr) if isinstance(expr, cst.SimpleString) else None
        if text is None:
            return None
        pair = parse_version(text)
        if pair is None:
            return None
        parts = text.strip().split("+")[0].split(".")
        if len(parts) > 2 and parts[2].isdigit():
            return (*pair, int(parts[2]))
        return pair if len(parts) > 1 else pair[:1]


def module_assignments(module: cst.Module) -> dict[str, cst.BaseExpression]:
    """Module-level names assigned exactly once (a flag computed from the version at import)."""
    seen: dict[str, list[cst.BaseExpression]] = {}
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1:
                    target = small.targets[0].target
                    if isinstance(target, cst.Name):
                        seen.setdefault(target.value, []).append(small.value)
    return {name: values[0] for name, values in seen.items() if len(values) == 1}


def branch_taken(guard: cst.If, blocks: Sequence[Sequence[cst.BaseStatement]]) -> bool | None:
    """True inside `guard`'s body, False inside its `else`/`elif`, None in its test."""
    if any(b is guard.body.body for b in blocks if isinstance(guard.body, cst.IndentedBlock)):
        return True
    orelse = guard.orelse
    if isinstance(orelse, cst.Else) and isinstance(orelse.body, cst.IndentedBlock):
        return False if any(b is orelse.body.body for b in blocks) else None
    if isinstance(orelse, cst.If):
        return False if branch_taken(orelse, blocks) is not None else None
    return None
