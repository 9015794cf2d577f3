"""Precision on repositories nobody tuned on (issue 26): re-run torchlint over the ledger's repositories and compare
its findings with the hand labels.

    python bench/realworld/run.py [--corpus DIR] [--no-clone] [--tsv OUT]

The ledger is two files beside this script: `repos.txt` (`owner/name@commit`, one a line) and `labels.tsv` (repo,
path, line, code, label, reason, line_sha; tab-separated). Each repository is cloned into `<corpus>/<name>` at its
commit when missing (skipped, with a message, when the clone fails: offline), then checked twice with torchlint: the
default selection and `--select ALL`. Findings are matched to labels by (repo, path, code, line text) -- the text is
kept in the ledger only as a short hash, `line_sha` -- so a label survives lines moving; several findings with the same
key pair up in line order. The report gives, per rule, findings / right / wrong / debatable / unlabelled for the
default selection and for the ALL-only errors and warnings, the rules proven on the wrong side of the default
selection's 80% bar, then the diff against the ledger: findings with no label
(new since the labels) and labels with no finding (gone). Exit status 0 whatever it finds.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
LABELS = ("right", "wrong", "debatable")
COLUMNS = ("repo", "path", "line", "code", "label", "reason", "line_sha")


@dataclass(frozen=True)
class Finding:
    repo: str  # owner/name
    path: str  # inside the repository; a notebook cell is `nb.ipynb:cell_3`
    line: int
    code: str
    severity: str
    text: str  # the stripped source line ("" when unreadable)


@dataclass(frozen=True)
class Label:
    repo: str
    path: str
    line: int
    code: str
    label: str
    reason: str
    line_sha: str


def line_sha(text: str) -> str:
    return hashlib.sha1(text.strip().encode()).hexdigest()[:12]


def read_repos(path: Path) -> list[tuple[str, str]]:
    out = []
    for raw in path.read_text().splitlines():
        s = raw.split("#", 1)[0].strip()
        if s:
            name, _, commit = s.partition("@")
            out.append((name, commit))
    return out


def read_labels(path: Path) -> list[Label]:
    out = []
    for raw in path.read_text().splitlines():
        if not raw.strip() or raw.startswith("#"):
            continue
        cells = raw.split("\t")
        if cells[0] == "repo":
            continue  # header
        cells += [""] * (len(COLUMNS) - len(cells))
        out.append(Label(cells[0], cells[1], int(cells[2]), cells[3], cells[4], cells[5], cells[6]))
    return out


def write_labels(path: Path, labels: Iterable[Label]) -> None:
    rows = ["\t".join(COLUMNS)]
    for lab in labels:
        rows.append("\t".join([lab.repo, lab.path, str(lab.line), lab.code, lab.label, lab.reason, lab.line_sha]))
    path.write_text("\n".join(rows) + "\n")


# --- matching and the report: pure functions, tested by tests/test_realworld_ledger.py -------------------------------


def key_of(repo: str, path: str, code: str, sha: str) -> tuple[str, str, str, str]:
    return (repo, path, code, sha)


def match(findings: list[Finding], labels: list[Label]) -> tuple[list[Label | None], list[Label]]:
    """Pairs findings with labels by (repo, path, code, line text hash), in line order within a key: one entry per
    finding (None: unlabelled), so equal findings (two on one line) each take their own label; then the labels no
    finding took (gone)."""
    by_key: dict[tuple[str, str, str, str], list[Label]] = defaultdict(list)
    for lab in labels:
        by_key[key_of(lab.repo, lab.path, lab.code, lab.line_sha)].append(lab)
    for labs in by_key.values():
        labs.sort(key=lambda lab: lab.line)
    fkeys: dict[tuple[str, str, str, str], list[int]] = defaultdict(list)
    for i, f in enumerate(findings):
        fkeys[key_of(f.repo, f.path, f.code, line_sha(f.text))].append(i)
    out: list[Label | None] = [None] * len(findings)
    gone: list[Label] = []
    for k, idxs in fkeys.items():
        idxs.sort(key=lambda i: findings[i].line)
        labs = by_key.pop(k, [])
        for i, lab in zip(idxs, labs):
            out[i] = lab
        gone += labs[len(idxs) :]
    for labs in by_key.values():
        gone += labs
    return out, gone


def subtract(everything: list[Finding], part: list[Finding]) -> list[Finding]:
    """The findings of `everything` not in `part` (a multiset difference): the ALL-only findings."""
    left = Counter((f.repo, f.path, f.line, f.code, f.text) for f in part)
    out = []
    for f in everything:
        k = (f.repo, f.path, f.line, f.code, f.text)
        if left[k]:
            left[k] -= 1
        else:
            out.append(f)
    return out


def per_rule(findings: list[Finding], labels: list[Label | None]) -> dict[str, Counter[str]]:
    table: dict[str, Counter[str]] = defaultdict(Counter)
    for f, lab in zip(findings, labels):
        row = table[f.code]
        row["findings"] += 1
        row[lab.label if lab is not None and lab.label in LABELS else "unlabelled"] += 1
    return dict(table)


@dataclass
class Report:
    default: dict[str, Counter[str]]
    default_errors: dict[str, Counter[str]]  # the default selection's error-severity findings alone
    all_only: dict[str, Counter[str]]
    new: list[Finding]
    gone: list[Label]


def build_report(default: list[Finding], every: list[Finding], labels: list[Label]) -> Report:
    """default: the default selection's findings; every: `--select ALL`'s (a superset). The ALL-only part counts
    errors and warnings only. New: findings of either table that no label matches; gone: labels no finding of
    `every` matches (an opt-in rule's information finding is still there, only not tabled)."""
    all_only = [f for f in subtract(every, default) if f.severity in ("error", "warning")]
    d_labels, _ = match(default, labels)
    a_labels, _ = match(all_only, labels)
    both, _ = match(default + all_only, labels)
    _, gone = match(every, labels)
    new = [f for f, lab in zip(default + all_only, both) if lab is None]
    errors = [(f, lab) for f, lab in zip(default, d_labels) if f.severity == "error"]
    error_table = per_rule([f for f, _ in errors], [lab for _, lab in errors])
    return Report(per_rule(default, d_labels), error_table, per_rule(all_only, a_labels), new, gone)


def format_table(title: str, table: dict[str, Counter[str]]) -> str:
    cols = ("findings", *LABELS, "unlabelled")
    lines = [title, f"{'rule':<8}" + "".join(f"{c:>12}" for c in cols)]
    total: Counter[str] = Counter()
    for code in sorted(table):
        lines.append(f"{code:<8}" + "".join(f"{table[code][c]:>12}" for c in cols))
        total.update(table[code])
    lines.append(f"{'total':<8}" + "".join(f"{total[c]:>12}" for c in cols))
    judged = sum(total[c] for c in LABELS)
    if judged:
        lines.append("  " + ", ".join(f"{c} {100 * total[c] / judged:.1f}%" for c in LABELS) + f" of {judged} labelled")
    return "\n".join(lines)


# The default selection's bar (issue 26): a rule stays in it only if >= 80% of its findings on code it was not tuned on
# are right, debatable counting against. A few findings prove little either way, so a rule is judged once it has
# MIN_JUDGED labelled findings: below the bar when even the 95% Wilson interval's upper end is under 80%; a rule outside
# the default is shown above it when the interval's lower end is at or above it (a candidate, not a verdict).
BAR, MIN_JUDGED, Z95 = 0.8, 3, 1.96
PARSE_STATUS = "TL000"  # a file or cell CPython cannot parse: always reported, not a rule the bar judges


def wilson(right: int, n: int) -> tuple[float, float]:
    """The 95% Wilson score interval of a proportion right/n (n > 0)."""
    p, z2 = right / n, Z95 * Z95
    centre, half = p + z2 / (2 * n), Z95 * ((p * (1 - p) + z2 / (4 * n)) / n) ** 0.5
    return (centre - half) / (1 + z2 / n), (centre + half) / (1 + z2 / n)


def verdicts(r: Report) -> list[str]:
    """Default rules whose measured precision is proven below the bar, and rules outside it proven above it."""
    out = []
    for where, table, failing in (("default", r.default, True), ("opt-in", r.all_only, False)):
        for code in sorted(table):
            if code == PARSE_STATUS:
                continue
            n = sum(table[code][c] for c in LABELS)
            if n < MIN_JUDGED:
                continue
            low, high = wilson(table[code]["right"], n)
            if failing and high < BAR:
                out.append(
                    f"  {code} ({where}): {table[code]['right']} of {n} right, at most {high:.0%}: below the bar"
                )
            elif not failing and low >= BAR:
                out.append(
                    f"  {code} ({where}): {table[code]['right']} of {n} right, at least {low:.0%}: above the bar"
                )
    return out


def format_report(r: Report) -> str:
    out = [
        format_table("default selection", r.default),
        "",
        format_table("default selection, errors only", r.default_errors),
        "",
        format_table("--select ALL only (errors and warnings)", r.all_only),
        "",
        f"the {BAR:.0%} bar (>= {MIN_JUDGED} labelled findings, 95% Wilson interval):",
        *(verdicts(r) or ["  no rule proven on the wrong side of it"]),
        "",
    ]
    out.append(f"new since the labels: {len(r.new)}")
    out += [f"  {f.repo}\t{f.path}\t{f.line}\t{f.code}" for f in r.new]
    out.append(f"labelled findings gone: {len(r.gone)}")
    out += [f"  {lab.repo}\t{lab.path}\t{lab.line}\t{lab.code}\t{lab.label}" for lab in r.gone]
    return "\n".join(out)


# --- cloning and running torchlint ----------------------------------------------------------------------------------


def ensure_clone(corpus: Path, repo: str, commit: str) -> Path | None:
    dest = corpus / repo.split("/")[1]
    if dest.is_dir():
        head = subprocess.run(["git", "-C", str(dest), "rev-parse", "HEAD"], capture_output=True, text=True)
        if head.stdout.strip() != commit:
            subprocess.run(["git", "-C", str(dest), "checkout", "-q", commit], capture_output=True)
        return dest
    corpus.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(
        ["git", "clone", "-q", f"https://github.com/{repo}.git", str(dest)], capture_output=True, text=True
    )
    if r.returncode != 0:
        print(f"skipping {repo}: git clone failed (offline?): {r.stderr.strip()[:200]}", file=sys.stderr)
        return None
    r = subprocess.run(["git", "-C", str(dest), "checkout", "-q", commit], capture_output=True, text=True)
    if r.returncode != 0:
        print(f"warning: {repo}: could not check out {commit}: {r.stderr.strip()[:200]}", file=sys.stderr)
    return dest


def source_line(root: Path, path: str, line: int, cache: dict[str, list[str]]) -> str:
    """The finding's line, stripped: from the file, or from the notebook cell (`nb.ipynb:cell_N`, 1-based, every
    cell counted)."""
    if path not in cache:
        lines: list[str] = []
        try:
            if ":cell_" in path:
                nb, _, cell = path.rpartition(":cell_")
                cells = json.loads((root / nb).read_text(encoding="utf-8")).get("cells", [])
                src = cells[int(cell) - 1].get("source", "")
                lines = ("".join(src) if isinstance(src, list) else src).splitlines()
            else:
                lines = (root / path).read_text(encoding="utf-8", errors="replace").splitlines()
        except (OSError, ValueError, IndexError, KeyError):
            pass
        cache[path] = lines
    lines = cache[path]
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


def run_torchlint(clone: Path, repo: str, select_all: bool) -> list[Finding]:
    cmd = [sys.executable, "-m", "torchlint", "check", "--no-cache", "-j", "1", "-q", "--exit-zero"]
    cmd += ["--output-format", "json", *(["--select", "ALL"] if select_all else []), clone.name]
    r = subprocess.run(cmd, cwd=clone.parent, capture_output=True, text=True)
    if r.returncode != 0:  # --exit-zero: only a crash of torchlint's gets here, and its findings are lost
        print(f"warning: {repo}: torchlint exited {r.returncode}: {r.stderr.strip()[-300:]}", file=sys.stderr)
    try:
        raw = json.loads(r.stdout or "[]")
    except ValueError:
        print(f"warning: {repo}: torchlint gave no JSON: {r.stderr.strip()[:200]}", file=sys.stderr)
        return []
    cache: dict[str, list[str]] = {}
    out = []
    for d in raw:
        path = d["path"].split("/", 1)[1] if "/" in d["path"] else d["path"]
        out.append(
            Finding(repo, path, int(d["line"]), d["code"], d["severity"], source_line(clone, path, d["line"], cache))
        )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=ROOT / ".corpus" / "realworld")
    ap.add_argument("--repos", type=Path, default=HERE / "repos.txt")
    ap.add_argument("--labels", type=Path, default=HERE / "labels.tsv")
    ap.add_argument("--no-clone", action="store_true", help="use only repositories already in the corpus")
    ap.add_argument("--tsv", type=Path, help="also write every default and ALL-only finding as ledger rows here")
    args = ap.parse_args(argv)

    labels = read_labels(args.labels) if args.labels.exists() else []
    default: list[Finding] = []
    every: list[Finding] = []
    for repo, commit in read_repos(args.repos):
        dest = args.corpus / repo.split("/")[1]
        if args.no_clone and not dest.is_dir():
            print(f"skipping {repo}: not in {args.corpus}", file=sys.stderr)
            continue
        clone = dest if args.no_clone else ensure_clone(args.corpus, repo, commit)
        if clone is None:
            continue
        default += run_torchlint(clone, repo, select_all=False)
        every += run_torchlint(clone, repo, select_all=True)
    repos = {r for r, _ in read_repos(args.repos) if (args.corpus / r.split("/")[1]).is_dir()}
    report = build_report(default, every, [lab for lab in labels if lab.repo in repos])
    print(format_report(report))
    if args.tsv:
        rows = default + [f for f in subtract(every, default) if f.severity in ("error", "warning")]
        d_labels, _ = match(rows, labels)
        write_labels(
            args.tsv,
            (
                Label(
                    f.repo,
                    f.path,
                    f.line,
                    f.code,
                    lab.label if lab else "",
                    lab.reason if lab else "",
                    line_sha(f.text),
                )
                for f, lab in zip(rows, d_labels)
            ),
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
