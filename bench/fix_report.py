"""Every fix torchlint offers on a corpus of repositories, as hunks to read, counted per rule.

`python -m bench.fix_report REPO... --out fix-report.md` lints every Python file of each
repository with every rule and writes, per rule and applicability (safe: what `--fix`
applies; unsafe: what `--unsafe-fixes` adds), one unified-diff hunk per fix, applied alone
to the file, and a count table. Each edited file is also compiled before and after: a fix
that breaks it is listed as such (the engine should already have dropped it). Reading the
hunks, and running the scripts that can run, is left to the reader: the verdicts (right /
wrong, runs identical / fixed / broken) go in the issue note.
"""

from __future__ import annotations

import argparse
import difflib
import os
from collections import Counter
from pathlib import Path

from torchlint.engine import lint_text
from torchlint.engine.source import apply_edits
from torchlint.findings import Applicability
from torchlint.registry import rules


def python_files(repo: Path) -> list[Path]:
    out = []
    for dirpath, dirnames, filenames in os.walk(repo):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "__pycache__")
        out.extend(Path(dirpath) / f for f in sorted(filenames) if f.endswith(".py"))
    return out


def _compiles(text: str) -> bool:
    try:
        compile(text, "fixed.py", "exec")
        return True
    except (SyntaxError, ValueError):
        return False


def hunks(repos: list[Path]) -> tuple[list[tuple[str, str, str, str]], Counter[tuple[str, str]]]:
    """(rule, applicability, file, hunk) of every safe or unsafe fix, and the count of each kind."""
    everything = list(rules().values())
    found: list[tuple[str, str, str, str]] = []
    counts: Counter[tuple[str, str]] = Counter()
    for repo in repos:
        for path in python_files(repo):
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            for f in lint_text(str(path), text, everything).findings:
                for fx in (f.fix, *f.alternatives):
                    if fx is None or fx.applicability is Applicability.DISPLAY:
                        continue
                    fixed = apply_edits(text, fx.edits)
                    name = str(path.relative_to(repo.parent))
                    diff = "".join(
                        difflib.unified_diff(
                            text.splitlines(keepends=True), fixed.splitlines(keepends=True), name, name, n=1
                        )
                    )
                    kind = fx.applicability.value + ("" if _compiles(fixed) else ", BREAKS COMPILATION")
                    found.append((f.code, kind, name, diff))
                    counts[f.code, fx.applicability.value] += 1
    return found, counts


def report(repos: list[Path]) -> str:
    found, counts = hunks(repos)
    codes = sorted({code for code, _ in counts})
    lines = [
        "# Fix report",
        "",
        f"Repositories: {', '.join(r.name for r in repos)}",
        "",
        "| rule | safe hunks | unsafe hunks |",
        "|---|---|---|",
    ]
    lines += [f"| {c} | {counts[c, 'safe']} | {counts[c, 'unsafe']} |" for c in codes]
    for code, kind, name, diff in sorted(found):
        lines += ["", f"## {code} ({kind}) {name}", "", "```diff", diff.rstrip("\n"), "```"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.fix_report", description=__doc__.split("\n\n")[0])
    p.add_argument("repos", nargs="+", type=Path, help="repository checkouts to lint")
    p.add_argument("--out", type=Path, default=Path("fix-report.md"))
    args = p.parse_args(argv)
    args.out.write_text(report(args.repos), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
