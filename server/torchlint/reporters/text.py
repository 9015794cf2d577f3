"""Human output: `path:line:col: CODE message`, coloured only on a terminal.

`[*]` marks a finding whose fix `torchlint check --fix` applies with the same
flags and config (a safe fix; an unsafe one where unsafe fixes are enabled), and
the summary says how many more `--unsafe-fixes` would apply.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection

from torchlint.findings import Finding, Severity

_COLOURS = {Severity.ERROR: "31", Severity.WARNING: "33", Severity.INFO: "36"}
FIX = "torchlint check --fix"


def _c(code: str, s: str, colour: bool) -> str:
    return f"\x1b[{code}m{s}\x1b[0m" if colour else s


def _applied(f: Finding, unsafe_paths: Collection[str]) -> bool:
    """`--fix` applies one of this finding's fixes (`unsafe_paths`: where unsafe fixes are enabled)."""
    return f.applied_fix(f.path in unsafe_paths) is not None


def _hidden(f: Finding, unsafe_paths: Collection[str]) -> bool:
    """Only `--unsafe-fixes` would apply one of this finding's fixes."""
    return f.path not in unsafe_paths and f.applied_fix(False) is None and f.applied_fix(True) is not None


def render(
    findings: list[Finding],
    *,
    colour: bool = False,
    fixed: int = 0,
    summary: bool = True,
    unsafe_paths: Collection[str] = (),
    dry_run: bool = False,
    **_,
) -> str:
    """Findings one a line, then the summary; `dry_run` (`--diff`): `fixed` were shown, not written."""
    lines = []
    for f in findings:
        loc = _c("1", f"{f.path}:{f.line}:{f.column}:", colour)
        code = _c(_COLOURS[f.severity], f.code, colour)
        mark = " [*]" if _applied(f, unsafe_paths) else ""
        lines.append(f"{loc} {code}{mark} {f.message}")
    if summary:
        lines.append(summary_line(findings, fixed, unsafe_paths, dry_run))
    return "".join(line + "\n" for line in lines)


def summary_line(
    findings: list[Finding], fixed: int = 0, unsafe_paths: Collection[str] = (), dry_run: bool = False
) -> str:
    parts = []
    if fixed:
        parts.append(f"{'Would fix' if dry_run else 'Fixed'} {fixed} finding{'s' * (fixed != 1)}.")
    if not findings:
        remain = "No findings would remain." if dry_run else "No findings remain."
        parts.append("All checks passed." if not fixed else remain)
    else:
        n = len(findings)
        fixable = sum(1 for f in findings if _applied(f, unsafe_paths))
        hidden = sum(1 for f in findings if _hidden(f, unsafe_paths))
        parts.append(f"Found {n} finding{'s' * (n != 1)}.")
        if fixable:
            parts.append(f"{fixable} fixable with `{FIX}`.")
        if hidden:
            what = (
                f"{hidden} more with `--fix --unsafe-fixes`"
                if fixable
                else f"{hidden} fixable with `{FIX} --unsafe-fixes`"
            )
            parts.append(f"{what} (they may change behaviour: review them).")
    return " ".join(parts)


def statistics(findings: list[Finding], hidden: list[Finding] | None = None, unsafe_paths: Collection[str] = ()) -> str:
    """Counts per rule, then per category; `hidden`: the findings of rules the default selection left out."""
    from torchlint.registry import rules

    catalogue = rules()
    counts = Counter((f.code, f.name, _applied(f, unsafe_paths)) for f in findings)
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0][0]))
    out = [f"{n:5d}  {code}  {'[*]' if fx else '   '} {name}\n" for (code, name, fx), n in rows]
    per_category = Counter(_category(f.code, catalogue) for f in findings)
    out.extend(
        f"{n:5d}  category: {category}\n"
        for category, n in sorted(per_category.items(), key=lambda kv: (-kv[1], kv[0]))
    )
    if hidden is not None:
        n = len(hidden)
        by_category = Counter(_category(f.code, catalogue) for f in hidden)
        detail = ", ".join(f"{k} {v}" for k, v in sorted(by_category.items(), key=lambda kv: (-kv[1], kv[0])))
        out.append(
            f"{n} finding{'s' * (n != 1)} hidden by the default selection"
            + (f" ({detail}); see them with `--select ALL`" if n else "")
            + "\n"
        )
    return "".join(out)


def _category(code: str, catalogue) -> str:
    cls = catalogue.get(code)
    return cls.category if cls is not None else "error"  # TL000: a file that could not be read or parsed
