"""Every fixture program gives exactly the findings its `# expect:` comments name.

Clean fixtures (`clean_*.py`) must be silent under every rule; buggy ones must
report each expected code on its line and nothing else. Then `--fix` on a copy
of the whole tree must fix what is fixable, re-parse, and be idempotent.
"""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from pathlib import Path

import libcst as cst
import pytest

from fixture_expectations import FIXTURES, expected, fixture_files

FILES = fixture_files(FIXTURES)


@pytest.fixture(scope="module")
def actual(tmp_path_factory):
    import subprocess
    import sys

    exe = Path(sys.executable).parent / "torchlint"
    out = subprocess.run(
        [str(exe), "check", "--select", "ALL", "--output-format", "json", *map(str, FILES)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode in (0, 1), out.stderr
    by_file = defaultdict(set)
    for item in json.loads(out.stdout):
        by_file[str(Path(item["path"]).resolve())].add((item["line"], item["code"]))
    return by_file


def test_there_are_buggy_and_clean_fixtures():
    names = [p.name for p in FILES]
    assert any(n.startswith("buggy_") for n in names) and any(n.startswith("clean_") for n in names)


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(FIXTURES)) for p in FILES])
def test_fixture_findings_match_expectations(path, actual):
    want = expected(path)
    got = actual.get(str(path.resolve()), set())
    if path.name.startswith("clean_"):
        assert not want, "clean fixtures carry no expectations"
    elif path.name.startswith("buggy_"):
        assert want, "a buggy fixture must expect at least one finding"
    # other files are the modules of a multi-file project (fixtures/projects/): as they expect
    assert got == want, f"missing {sorted(want - got)}, unexpected {sorted(got - want)}"


def test_fix_whole_fixture_tree(tmp_path, run_cli):
    tree = tmp_path / "fixtures"
    shutil.copytree(FIXTURES, tree, ignore=shutil.ignore_patterns("probe"))
    before = json.loads(run_cli("check", "--output-format", "json", tree).stdout)

    def applies(f):  # what `--fix --unsafe-fixes` applies: all but display-only fixes
        return f["fix"] is not None and f["fix"]["applicability"] != "display"

    fixable = {(Path(f["path"]).name, f["code"]) for f in before if applies(f)}
    assert fixable, "the fixtures should contain fixable findings"

    first = run_cli("check", "--fix", "--unsafe-fixes", tree)
    assert first.returncode in (0, 1), first.stderr
    for p in tree.rglob("*.py"):
        cst.parse_module(p.read_text(encoding="utf-8"))  # every fixed file re-parses
    snapshot = {p: p.read_bytes() for p in tree.rglob("*.py")}
    second = run_cli("check", "--fix", "--unsafe-fixes", tree)
    assert second.returncode in (0, 1), second.stderr
    assert {p: p.read_bytes() for p in tree.rglob("*.py")} == snapshot, "a second --fix changed files"

    after = json.loads(run_cli("check", "--output-format", "json", tree).stdout)
    assert [f for f in after if applies(f)] == [], "fixable findings remain after --fix"
    remaining = {(Path(f["path"]).name, f["code"]) for f in after}
    assert len(after) < len(before) and not any(
        k in remaining and all(applies(f) for f in before if (Path(f["path"]).name, f["code"]) == k) for k in fixable
    ), "a finding that --fix fixed everywhere in a file is still reported there"
