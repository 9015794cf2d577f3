"""Fix applicability on the command line: `--fix` applies safe fixes, `--unsafe-fixes` (or
`unsafe-fixes = true`) adds unsafe ones, `--diff` shows what `--fix` would do with the same flags,
and every output format says which fixes are which."""

from __future__ import annotations

import json

import pytest

from selecting import extend_select

# TL101's fix (insert `opt.zero_grad()`) is safe; TL601's (`weights_only=True`) is unsafe.
BUGGY = """\
import torch

model = torch.nn.Linear(2, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    torch.nn.functional.mse_loss(model(x), y).backward()
    opt.step()
sd = torch.load("ckpt.pt")
"""
SAFE_FIXED = BUGGY.replace("for x, y in loader:\n", "for x, y in loader:\n    opt.zero_grad()\n")
ALL_FIXED = SAFE_FIXED.replace('torch.load("ckpt.pt")', 'torch.load("ckpt.pt", weights_only=True)')


@pytest.fixture
def train(tmp_path):
    (tmp_path / "pyproject.toml").write_text(extend_select("TL601"))  # the unsafe fix's rule is opt-in
    path = tmp_path / "train.py"
    path.write_text(BUGGY)
    return path


def test_fix_applies_only_safe_fixes(train, run_cli):
    r = run_cli("check", "--fix", train)
    assert r.returncode == 1  # TL601 remains
    assert train.read_text() == SAFE_FIXED
    assert "Fixed 1 finding." in r.stdout
    assert "1 fixable with `torchlint check --fix --unsafe-fixes`" in r.stdout


def test_diff_says_what_it_would_fix_and_writes_nothing(train, run_cli):
    r = run_cli("check", "--no-cache", "--diff", train)
    assert train.read_text() == BUGGY
    assert "Would fix 1 finding." in r.stdout and "Fixed" not in r.stdout
    r = run_cli("check", "--no-cache", "--diff", "--unsafe-fixes", train)
    assert r.stdout.rstrip().endswith("Would fix 2 findings. No findings would remain."), r.stdout


def test_unsafe_fixes_flag_adds_unsafe_fixes(train, run_cli):
    r = run_cli("check", "--fix", "--unsafe-fixes", train)
    assert r.returncode == 0, r.stdout
    assert train.read_text() == ALL_FIXED


def test_unsafe_fixes_config_key_and_its_override(train, run_cli):
    (train.parent / "pyproject.toml").write_text(extend_select("TL601") + "unsafe-fixes = true\n")
    assert run_cli("check", "--fix", "--no-unsafe-fixes", train).returncode == 1
    assert train.read_text() == SAFE_FIXED
    assert run_cli("check", "--fix", train).returncode == 0
    assert train.read_text() == ALL_FIXED


def test_unsafe_fixes_config_key_must_be_a_boolean(train, run_cli):
    (train.parent / "pyproject.toml").write_text('[tool.torchlint]\nunsafe-fixes = "yes"\n')
    r = run_cli("check", train)
    assert r.returncode == 2 and "`unsafe-fixes` must be true or false" in r.stderr


def test_diff_shows_what_fix_would_do_with_the_same_flags(train, run_cli):
    safe = run_cli("check", "--diff", train, cwd=train.parent).stdout
    assert "+    opt.zero_grad()\n" in safe and "+sd = " not in safe
    unsafe = run_cli("check", "--diff", "--unsafe-fixes", train, cwd=train.parent).stdout
    assert "+    opt.zero_grad()\n" in unsafe and '+sd = torch.load("ckpt.pt", weights_only=True)\n' in unsafe
    assert train.read_text() == BUGGY


def test_text_marks_only_what_fix_applies(train, run_cli):
    lines = run_cli("check", train).stdout.splitlines()
    assert any(" TL101 [*] " in line for line in lines)
    (tl601,) = [line for line in lines if " TL601 " in line]
    assert "[*]" not in tl601
    assert lines[-1] == (
        "Found 2 findings. 1 fixable with `torchlint check --fix`. "
        "1 more with `--fix --unsafe-fixes` (they may change behaviour: review them)."
    )
    with_unsafe = run_cli("check", "--unsafe-fixes", train).stdout.splitlines()
    assert any(" TL601 [*] " in line for line in with_unsafe)
    assert with_unsafe[-1] == "Found 2 findings. 2 fixable with `torchlint check --fix`."
    stats = run_cli("check", "--statistics", "-q", train).stdout
    assert "TL101  [*] missing-zero-grad" in stats and "TL601      torch-load-without-weights-only" in stats


def test_json_fix_carries_its_applicability(train, run_cli):
    findings = {f["code"]: f for f in json.loads(run_cli("check", "--output-format", "json", train).stdout)}
    assert findings["TL101"]["fix"]["applicability"] == "safe"
    assert findings["TL601"]["fix"]["applicability"] == "unsafe"
    assert set(findings["TL601"]["fix"]) == {"message", "applicability", "risk", "edits"}
    assert findings["TL601"]["fix"]["risk"] and findings["TL101"]["fix"]["risk"] == ""
    cached = {f["code"]: f for f in json.loads(run_cli("check", "--output-format", "json", train).stdout)}
    assert cached == findings  # the cache keeps the risk


def test_sarif_fixes_carry_their_applicability_and_risk(train, run_cli):
    doc = json.loads(run_cli("check", "--output-format", "sarif", train, cwd=train.parent).stdout)
    results = {r["ruleId"]: r for r in doc["runs"][0]["results"]}
    (unsafe,) = results["TL601"]["fixes"]
    assert unsafe["properties"]["applicability"] == "unsafe" and unsafe["properties"]["risk"]
    (fix,) = results["TL101"]["fixes"]
    assert fix["properties"] == {"applicability": "safe", "risk": ""}
    (change,) = fix["artifactChanges"]
    assert change["artifactLocation"] == results["TL101"]["locations"][0]["physicalLocation"]["artifactLocation"]
    (replacement,) = change["replacements"]
    assert replacement == {
        "deletedRegion": {"startLine": 6, "startColumn": 1, "endLine": 6, "endColumn": 1},
        "insertedContent": {"text": "    opt.zero_grad()\n"},
    }


# TL105 where the rule lists the unsafe `.item()` first (the accumulator only meets numbers) and the safe
# `.detach()` second: `--fix` applies the first applicable fix, so the `.detach()` (issue 27).
ITEM_FIRST = """\
import torch
def train_epoch(model, opt, loader):
    total = 0.0
    for x, y in loader:
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        total += loss
    print(total)
"""
DETACHED = ITEM_FIRST.replace("total += loss\n", "total += loss.detach()\n")


def test_item_first_is_listed_first():
    from torchlint.engine import lint_text
    from torchlint.registry import rules

    (f,) = lint_text("t.py", ITEM_FIRST, [rules()["TL105"]]).findings
    assert f.fix.applicability.value == "unsafe" and ".item()" in f.fix.edits[0].content
    assert [a.applicability.value for a in f.alternatives] == ["safe"]


@pytest.mark.parametrize("flags", [(), ("--unsafe-fixes",)])
def test_fix_applies_the_first_applicable_fix(tmp_path, run_cli, flags):
    path = tmp_path / "train.py"
    path.write_text(ITEM_FIRST)
    assert run_cli("check", "--select", "TL105", "--no-cache", *flags, path).stdout.count("[*]") == 1
    r = run_cli("check", "--select", "TL105", "--fix", *flags, path)
    assert path.read_text() == DETACHED, r.stdout
    assert r.returncode == 0 and "Fixed 1 finding." in r.stdout


def test_json_and_sarif_list_every_fix_safe_first_with_its_risk(tmp_path, run_cli):
    path = tmp_path / "train.py"
    path.write_text(ITEM_FIRST)
    (item,) = json.loads(run_cli("check", "--select", "TL105", "--output-format", "json", path).stdout)
    assert [item["fix"]["applicability"], *(a["applicability"] for a in item["alternatives"])] == ["safe", "unsafe"]
    assert item["fix"]["risk"] == "" and item["alternatives"][0]["risk"]
    sarif = json.loads(run_cli("check", "--select", "TL105", "--output-format", "sarif", path).stdout)
    (result,) = sarif["runs"][0]["results"]
    props = [fx["properties"] for fx in result["fixes"]]
    assert [p["applicability"] for p in props] == ["safe", "unsafe"]
    assert props[1]["risk"] and props[1]["risk"] in result["fixes"][1]["description"]["text"]
