"""bench/realworld/run.py's matching and report logic on a synthetic ledger: no network, no corpus."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("realworld_run", ROOT / "bench" / "realworld" / "run.py")
assert _spec is not None and _spec.loader is not None
run = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = run  # dataclasses look their module up
_spec.loader.exec_module(run)

Finding, Label, sha = run.Finding, run.Label, run.line_sha


def f(path, line, code, text, severity="error", repo="o/a"):
    return Finding(repo, path, line, code, severity, text)


def lab(path, line, code, label, text, repo="o/a"):
    return Label(repo, path, line, code, label, "why", sha(text))


def test_match_survives_line_shifts_and_pairs_duplicates_in_order():
    findings = [
        f("x.py", 12, "TL105", "total += loss"),  # was line 10: the text still matches
        f("x.py", 30, "TL106", "l = sum(a) + sum(b)"),  # two findings on one line
        f("x.py", 30, "TL106", "l = sum(a) + sum(b)"),
        f("x.py", 40, "TL301", "y = model(X)"),  # new
        f("x.py", 90, "TL111", "net.eval()"),  # one text on two lines, listed out of order:
        f("x.py", 60, "TL111", "net.eval()"),  # they pair with the labels in line order
    ]
    labels = [
        lab("x.py", 10, "TL105", "right", "total += loss"),
        lab("x.py", 28, "TL106", "debatable", "l = sum(a) + sum(b)"),
        lab("x.py", 28, "TL106", "wrong", "l = sum(a) + sum(b)"),
        lab("x.py", 50, "TL111", "wrong", "model.eval()"),  # gone
        lab("x.py", 12, "TL105", "right", "other text"),  # same line, other text: gone
        lab("x.py", 88, "TL111", "wrong", "net.eval()"),
        lab("x.py", 58, "TL111", "debatable", "net.eval()"),
    ]
    got, gone = run.match(findings, labels)
    assert [g.label if g else None for g in got] == ["right", "debatable", "wrong", None, "wrong", "debatable"]
    assert sorted((g.code, g.line) for g in gone) == [("TL105", 12), ("TL111", 50)]


def test_report_counts_per_rule_and_diff():
    default = [
        f("a.py", 1, "TL105", "t += loss", "warning"),
        f("a.py", 2, "TL105", "u += loss", "warning"),
        f("nb.ipynb:cell_3", 4, "TL301", "y = m(X)"),
        f("b.py", 9, "TL601", "torch.load(p)", "warning", repo="o/b"),
    ]
    every = [
        *default,
        f("a.py", 7, "TL701", "torch.range(3)", "warning"),
        f("a.py", 8, "TL106", "sum(xs)", "info"),  # info: not in the ALL-only table
        f("a.py", 9, "TL704", "resnet18(pretrained=True)", "warning"),
    ]
    labels = [
        lab("a.py", 1, "TL105", "right", "t += loss"),
        lab("a.py", 2, "TL105", "debatable", "u += loss"),
        lab("nb.ipynb:cell_3", 4, "TL301", "wrong", "y = m(X)"),
        lab("a.py", 7, "TL701", "right", "torch.range(3)"),
        lab("c.py", 3, "TL202", "wrong", "self.xs = [nn.Linear(1, 1)]"),
        lab("a.py", 8, "TL106", "debatable", "sum(xs)"),  # an opt-in rule's info finding: untabled, not gone
    ]
    r = run.build_report(default, every, labels)
    assert dict(r.default["TL105"]) == {"findings": 2, "right": 1, "debatable": 1}
    assert dict(r.default["TL301"]) == {"findings": 1, "wrong": 1}
    assert dict(r.default["TL601"]) == {"findings": 1, "unlabelled": 1}
    assert set(r.all_only) == {"TL701", "TL704"}
    assert dict(r.all_only["TL701"]) == {"findings": 1, "right": 1}
    assert dict(r.all_only["TL704"]) == {"findings": 1, "unlabelled": 1}
    assert sorted((x.code, x.repo) for x in r.new) == [("TL601", "o/b"), ("TL704", "o/a")]
    assert [(x.code, x.path) for x in r.gone] == [("TL202", "c.py")]
    text = run.format_report(r)
    assert "new since the labels: 2" in text and "labelled findings gone: 1" in text
    assert "right 33.3%, wrong 33.3%, debatable 33.3% of 3 labelled" in text


def test_ledger_round_trip(tmp_path):
    labels = [lab("p.py", 3, "TL105", "right", "t += loss"), lab("q.ipynb:cell_2", 1, "TL707", "wrong", "it.next()")]
    path = tmp_path / "labels.tsv"
    run.write_labels(path, labels)
    assert run.read_labels(path) == labels
    repos = tmp_path / "repos.txt"
    repos.write_text("# unseen at 2026-01-01\no/a@abc123\n\no/b@def456  # note\n")
    assert run.read_repos(repos) == [("o/a", "abc123"), ("o/b", "def456")]


def test_shipped_ledger_is_well_formed():
    repos = run.read_repos(ROOT / "bench" / "realworld" / "repos.txt")
    assert len(repos) >= 10 and all(len(c) == 40 for _, c in repos)
    names = {r for r, _ in repos}
    for row in run.read_labels(ROOT / "bench" / "realworld" / "labels.tsv"):
        assert row.repo in names and row.label in run.LABELS and row.reason and len(row.line_sha) == 12, row


def test_the_default_errors_are_counted_apart():
    findings = [
        run.Finding("o/r", "a.py", 1, "TL101", "error", "x"),
        run.Finding("o/r", "a.py", 2, "TL105", "warning", "y"),
    ]
    labels = [
        run.Label("o/r", "a.py", 1, "TL101", "wrong", "why", run.line_sha("x")),
        run.Label("o/r", "a.py", 2, "TL105", "right", "why", run.line_sha("y")),
    ]
    report = run.build_report(findings, findings, labels)
    assert report.default_errors == {"TL101": {"findings": 1, "wrong": 1}}
    assert "errors only" in run.format_report(report)


def test_the_bar_judges_a_rule_only_on_enough_findings():
    """0 of 3 right is proven below 80%; 0 of 2 proves nothing; 40 of 40 outside the default is above it."""
    low, high = run.wilson(0, 3)
    assert low == 0 and 0.5 < high < 0.8
    assert run.wilson(40, 40)[0] > 0.9
    from collections import Counter

    default = {"TL801": Counter(debatable=3), "TL305": Counter(wrong=2), "TL105": Counter(right=9, wrong=1)}
    default["TL000"] = Counter(debatable=30)  # the parse status: not judged
    report = run.Report(default, {}, {"TL702": Counter(right=40)}, [], [])
    assert run.verdicts(report) == [
        "  TL801 (default): 0 of 3 right, at most 56%: below the bar",
        "  TL702 (opt-in): 40 of 40 right, at least 91%: above the bar",
    ]
