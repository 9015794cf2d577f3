"""Version guards: what an `if` on the torch version says about the code under it.

`if version.parse(torch.__version__) < version.parse("1.11"):` guards code written for old
releases: on the torch the project targets (2.x) that branch never runs, so an API it calls that
2.x deprecated or removed is no finding, and a fix written for 2.x would break exactly the
releases the branch exists for. Rules whose verdict depends on the torch version declare it
(`Rule.version_sensitive`) and the engine drops their findings in such branches.

`torchvision.__version__` is read the same way, at the torchvision released with the target torch (each
torch release ships with one: `paired_torchvision`).

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


def paired_torchvision(torch: tuple[int, int]) -> tuple[int, int]:
    """The torchvision release series made for a torch series: 1.x with 0.(x+1) (1.0 with 0.2), 2.x with
    0.(x+15) (2.0 with 0.15, 2.13 with 0.28)."""
    major, minor = torch
    if major < 2:
        return (0, max(minor + 1, 2))
    return (0, minor + 15 + 100 * (major - 2))


class VersionGuards:
    """Evaluates guards at the target torch (major, minor): True, False, or None when unknown."""

    def __init__(self, target: tuple[int, int], qualname: Qualname, assigned: dict[str, cst.BaseExpression]) -> None:
        self.target = target
        self.targets = {"torch.__version__": target, "torchvision.__version__": paired_torchvision(target)}
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
        target = self._target_of(left)
        if target is not None:
            bound = self._literal(right)
            flipped = False
        else:
            target, bound, flipped = self._target_of(right), self._literal(left), True
        if target is None or bound is None:
            return None
        # The target is a release series (2.4 = 2.4.x): a bound inside it (2.4.1) is not decided by it.
        if len(bound) > 2 and bound[:2] == target and any(bound[2:]):
            return None
        here = target + (0,) * (len(bound) - 2) if len(bound) > 2 else target[: len(bound)]
        return compare(bound, here) if flipped else compare(here, bound)

    def _target_of(self, expr: cst.BaseExpression) -> tuple[int, int] | None:
        """The target release series of the library whose `__version__` `expr` reads (None: not a version)."""
        target = self.targets.get(self.qualname(expr) or "")
        if target is not None:
            return target
        if isinstance(expr, cst.Call) and self.qualname(expr.func) in _WRAPPERS and len(expr.args) == 1:
            return self._target_of(expr.args[0].value)
        if isinstance(expr, cst.Name) and expr.value in self.assigned:
            return self._target_of(self.assigned[expr.value])
        return None

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
