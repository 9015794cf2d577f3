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


def statistics(findings: list[Finding], hidden: list[Finding] | None = None) -> str:
    """Counts per rule, then per category; `hidden`: the findings of rules the default selection left out."""
    from torchlint.registry import rules

    catalogue = rules()
    counts = Counter((f.code, f.name, bool(f.fix)) for f in findings)
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
    return cls.category.value if cls is not None else "error"  # TL000: a file that could not be read or parsed
