"""Every fix torchlint offers on a corpus of repositories, as hunks to read, counted per rule.

`python -m bench.fix_report REPO... --out fix-report.md` lints every Python file and notebook
(its code cells joined, as torchlint checks it) of each repository with every rule and
writes, per rule and applicability (safe: what `--fix` may apply; unsafe: what
`--unsafe-fixes` may add), one unified-diff hunk per fix, applied alone to the file, and a
count table. A hunk `--fix` would not apply (a finding's second safe fix; an unsafe fix
where a safe one comes first) says so. Each edited file is also compiled before and after: a fix
that breaks a file that compiled is listed as such (the engine should already have dropped it). With `--run
SECONDS`, every file with safe fixes is run as a script before and after `--fix` (safe fixes
only; CPU only, beside the original so its imports resolve) and classified: identical (same
exit status and output), fixed (failed before, runs after), broken (ran before, fails after),
changed, or not runnable (fails both ways: data, GPU, arguments). Reading the hunks is left to
the reader: the verdicts (right / wrong) go in the issue note.
"""

from __future__ import annotations

import argparse
import difflib
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from torchlint import notebook
from torchlint.engine import fix_text, lint_text
from torchlint.engine.core.source import apply_edits
from torchlint.findings import Applicability
from torchlint.registry import rules


def python_files(repo: Path) -> list[Path]:
    out = []
    for dirpath, dirnames, filenames in os.walk(repo):
        dirnames[:] = sorted(
            d for d in dirnames if not d.startswith(".") and d not in ("__pycache__", ".ipynb_checkpoints")
        )
        out.extend(Path(dirpath) / f for f in sorted(filenames) if f.endswith((".py", ".ipynb")))
    return out


def sources(repos: list[Path]) -> Iterator[tuple[Path, Path, str]]:
    """(repository, path, text) of every Python file that reads as UTF-8, and of every notebook the
    program of its code cells (what torchlint lints and fixes)."""
    for repo in repos:
        for path in python_files(repo):
            try:
                if path.suffix == ".ipynb":
                    yield repo, path, notebook.build(notebook.read_ipynb(path.read_bytes())[1]).text
                else:
                    yield repo, path, path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError, notebook.NotebookError):
                continue


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
    for repo, path, text in sources(repos):
        compiled = _compiles(text)  # a file that does not compile as it is (Python 2) cannot be broken by a fix
        for f in lint_text(str(path), text, everything).findings:
            applied = f.applied_fix(False), f.applied_fix(True)
            for fx in f.fixes():
                if fx.applicability is Applicability.DISPLAY:
                    continue
                fixed = apply_edits(text, fx.edits)
                name = str(path.relative_to(repo.parent))
                diff = "".join(
                    difflib.unified_diff(
                        text.splitlines(keepends=True), fixed.splitlines(keepends=True), name, name, n=1
                    )
                )
                kind = fx.applicability.value + ("" if fx in applied else ", not applied by --fix")
                kind += "" if not compiled or _compiles(fixed) else ", BREAKS COMPILATION"
                found.append((f.code, kind, name, diff))
                counts[f.code, fx.applicability.value] += 1
    return found, counts


def run_verdict(path: Path, fixed: str, seconds: float) -> str:
    """How the script at `path` runs before and after its safe fixes (the fixed copy sits beside it)."""
    copy = path.with_name(f"_torchlint_fixed_{path.name}")
    copy.write_text(fixed, encoding="utf-8")
    try:
        before, after = (_run(p, seconds) for p in (path, copy))
    finally:
        copy.unlink()
    if before[0] != 0 and after[0] != 0:
        return "not runnable"
    if before == after:
        return "identical"
    return "fixed" if before[0] != 0 else "broken" if after[0] != 0 else "changed"


def _run(path: Path, seconds: float) -> tuple[int, str]:
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "PYTHONHASHSEED": "0"}
    try:
        done = subprocess.run(
            [sys.executable, path.name], cwd=path.parent, capture_output=True, text=True, timeout=seconds, env=env
        )
    except subprocess.TimeoutExpired:
        return -1, "timed out"
    return done.returncode, done.stdout


def runs(repos: list[Path], seconds: float) -> list[tuple[str, str]]:
    """(file, verdict) of every file with safe fixes, run before and after `--fix`."""
    everything = list(rules().values())
    verdicts = []
    for repo, path, text in sources(repos):
        if path.suffix != ".py":
            continue  # a notebook is read, not run
        result = fix_text(str(path), text, everything)
        if result.applied:
            verdicts.append((str(path.relative_to(repo.parent)), run_verdict(path, result.text, seconds)))
    return verdicts


def report(repos: list[Path], seconds: float | None = None) -> str:
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
    if seconds is not None:
        verdicts = runs(repos, seconds)
        lines += ["", "Scripts with safe fixes, run before and after `--fix`:", ""]
        lines += [f"- {verdict}: {n}" for verdict, n in sorted(Counter(v for _, v in verdicts).items())] or ["- (none)"]
        lines += ["", "| script | verdict |", "|---|---|", *(f"| {name} | {verdict} |" for name, verdict in verdicts)]
    for code, kind, name, diff in sorted(found):
        lines += ["", f"## {code} ({kind}) {name}", "", "```diff", diff.rstrip("\n"), "```"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.fix_report", description=__doc__.split("\n\n")[0])
    p.add_argument("repos", nargs="+", type=Path, help="repository checkouts to lint")
    p.add_argument("--out", type=Path, default=Path("fix-report.md"))
    p.add_argument("--run", type=float, metavar="SECONDS", help="run the fixed scripts, each for at most this long")
    args = p.parse_args(argv)
    args.out.write_text(report(args.repos, args.run), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
