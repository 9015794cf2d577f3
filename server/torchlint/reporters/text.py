"""Human output: `path:line:col: CODE message`, coloured only on a terminal."""

from __future__ import annotations

from collections import Counter

from torchlint.findings import Finding, Severity

_COLOURS = {Severity.ERROR: "31", Severity.WARNING: "33", Severity.INFO: "36"}


def _c(code: str, s: str, colour: bool) -> str:
    return f"\x1b[{code}m{s}\x1b[0m" if colour else s


def render(findings: list[Finding], *, colour: bool = False, fixed: int = 0, summary: bool = True, **_) -> str:
    lines = []
    for f in findings:
        loc = _c("1", f"{f.path}:{f.line}:{f.column}:", colour)
        code = _c(_COLOURS[f.severity], f.code, colour)
        mark = " [*]" if f.fix else ""
        lines.append(f"{loc} {code}{mark} {f.message}")
    if summary:
        lines.append(summary_line(findings, fixed))
    return "".join(line + "\n" for line in lines)


def summary_line(findings: list[Finding], fixed: int = 0) -> str:
    parts = []
    if fixed:
        parts.append(f"Fixed {fixed} finding{'s' * (fixed != 1)}.")
    if not findings:
        parts.append("All checks passed." if not fixed else "No findings remain.")
    else:
        n = len(findings)
        fixable = sum(1 for f in findings if f.fix)
        parts.append(f"Found {n} finding{'s' * (n != 1)}.")
        if fixable:
            parts.append(f"{fixable} fixable with `torchlint check --fix`.")
    return " ".join(parts)


def statistics(findings: list[Finding]) -> str:
    counts = Counter((f.code, f.name, bool(f.fix)) for f in findings)
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0][0]))
    return "".join(f"{n:5d}  {code}  {'[*]' if fx else '   '} {name}\n" for (code, name, fx), n in rows)
