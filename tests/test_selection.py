"""Categories and the default selection: what runs without configuration, and every way to widen it.

The CLI, the language server and the flake8 plugin all select through `Settings.selection`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from torchlint.config import ConfigResolver, Overrides, Settings
from torchlint.docs import rule_markdown
from torchlint.engine.rule import CATEGORIES, DEFAULT_CATEGORIES, Rule
from torchlint.lsp.settings import ClientSettings
from torchlint.lsp.settings import setup as server_setup
from torchlint.registry import known_codes, rules

# A removed API (TL710, correctness), a deprecated one (TL701) and a no-op wrapper (TL702): both modernisation.
SOURCE = """\
import torch
from torch.autograd import Variable

x = Variable(torch.ones(2, 2))
q, r = torch.qr(x)
s = torch.solve(x, x)
"""
OPT_IN = {code for code, cls in rules().items() if not cls.by_default()}


def codes(run_cli, *args):
    r = run_cli("check", "--output-format", "json", *args)
    assert r.returncode in (0, 1), r.stderr
    return sorted({f["code"] for f in json.loads(r.stdout)})


@pytest.fixture
def program(tmp_path):
    (tmp_path / "legacy.py").write_text(SOURCE)
    return tmp_path / "legacy.py"


def test_every_rule_has_a_category_and_both_sides_of_the_default_are_populated():
    assert all(cls.category in CATEGORIES for cls in rules().values())
    assert {"TL702", "TL701", "TL303"} <= OPT_IN
    assert {"TL101", "TL105", "TL604", "TL707", "TL710"}.isdisjoint(OPT_IN)


@pytest.mark.parametrize(
    "code",
    ["TL106", "TL110", "TL111", "TL117", "TL122", "TL203", "TL306", "TL405", "TL407", "TL408", "TL505"]
    + ["TL601", "TL602", "TL703", "TL801", "TL802", "TL805", "TL808", "TL107", "TL120", "TL202", "TL301", "TL304"]
    + ["TL603"],
)
def test_a_default_category_rule_opt_in_for_its_precision_is_left_out_and_documented(code, run_cli, tmp_path):
    """A rule of a default category whose measured precision missed the bar is opt-in, and says why."""
    cls = rules()[code]
    assert cls.category in DEFAULT_CATEGORIES and cls.opt_in
    assert code not in Settings().selection("m.py", rules()).codes
    assert code in Settings(extend_select=[code]).selection("m.py", rules()).codes
    assert "## Why opt-in" in rule_markdown(cls) and "opt-in" in rule_markdown(cls).splitlines()[2]
    (tmp_path / "m.py").write_text("")
    settings = run_cli("check", "--show-settings", tmp_path / "m.py", cwd=tmp_path).stdout
    assert code in next(line for line in settings.splitlines() if line.startswith("opt-in by measured precision"))


def test_a_rule_without_a_valid_category_is_refused():
    with pytest.raises(TypeError, match="category"):
        type("NoCategory", (Rule,), {"code": "TL998"})
    with pytest.raises(TypeError, match="category"):
        type("BadCategory", (Rule,), {"code": "TL998", "category": "cosmetics"})


@pytest.mark.parametrize(
    "settings,want",
    [
        (Settings(), {"TL710"}),
        (Settings(extend_select=["TL7"]), {"TL701", "TL702", "TL710"}),
        (Settings(extend_select=["TL702"]), {"TL702", "TL710"}),
        (Settings(select=["ALL"]), {"TL701", "TL702", "TL710"}),
        (Settings(select=["TL701"]), {"TL701"}),
        (Settings(ignore=["TL7"], extend_select=["TL702"]), {"TL702"}),
        (Settings(ignore=["TL710"]), set()),
    ],
)
def test_selection_codes(settings, want):
    enabled = set(settings.selection("legacy.py", rules()).codes)
    assert enabled & {"TL701", "TL702", "TL710"} == want
    assert ("TL101" in enabled) == (settings.select in (None, ["ALL"]))


def test_per_file_ignores_still_apply_to_the_default():
    s = Settings(per_file_ignores={"tests/*": ["TL1"]})
    assert "TL101" not in s.selection("tests/t.py", rules()).codes
    assert "TL101" in s.selection("train.py", rules()).codes


@pytest.mark.parametrize(
    "overrides,want",
    [
        (Overrides(), {"TL710"}),
        (Overrides(extend_select=["TL701"]), {"TL701", "TL710"}),
        (Overrides(select=["ALL"]), {"TL701", "TL702", "TL710"}),
    ],
)
def test_overrides_on_the_default(overrides, want):
    assert set(Settings().selection("legacy.py", rules(), overrides).codes) & {"TL701", "TL702", "TL710"} == want


@pytest.mark.parametrize(
    "args,config,want",
    [
        ((), None, ["TL710"]),
        (("--extend-select", "TL7"), None, ["TL701", "TL702", "TL710"]),
        (("--select", "ALL"), None, ["TL701", "TL702", "TL710"]),
        ((), 'extend-select = ["TL7"]', ["TL701", "TL702", "TL710"]),
        ((), 'select = ["ALL"]\nignore = ["TL701"]', ["TL702", "TL710"]),
        ((), 'extend-select = ["TL702"]', ["TL702", "TL710"]),
    ],
)
def test_cli_default_and_widening(program, run_cli, args, config, want):
    if config is not None:
        (program.parent / "torchlint.toml").write_text(config + "\n")
    assert codes(run_cli, *args, program) == want


def test_server_selects_the_same_default(program):
    resolver = ConfigResolver(known_codes())
    selected = {cls.code for cls in server_setup(resolver, ClientSettings(), str(program)).rules}
    assert selected == set(rules()) - OPT_IN
    widened = ClientSettings(select=["ALL"])
    assert {cls.code for cls in server_setup(resolver, widened, str(program)).rules} == set(rules())


def test_flake8_runs_the_default_selection_and_honours_extend_select(program):
    flake8 = Path(sys.executable).parent / "flake8"

    def reported():
        r = subprocess.run([str(flake8), "--select", "TL", str(program)], capture_output=True, text=True, timeout=120)
        return sorted({line.split()[1] for line in r.stdout.splitlines()})

    assert reported() == ["TL710"]
    (program.parent / "torchlint.toml").write_text('extend-select = ["TL7"]\n')
    assert reported() == ["TL701", "TL702", "TL710"]


def test_show_settings_prints_the_effective_selection(program, run_cli):
    r = run_cli("check", "--show-settings", program)
    assert r.returncode == 0, r.stderr
    lines = dict(line.split(": ", 1) for line in r.stdout.splitlines())
    assert lines["select"] == "(default: correctness, security, resource, performance)"
    enabled = lines[next(k for k in lines if k.startswith("enabled"))]
    assert set(enabled.split(", ")) == set(rules()) - OPT_IN
    assert set(lines["left out by the default selection"].split(", ")) == OPT_IN

    (program.parent / "torchlint.toml").write_text('extend-select = ["TL702"]\nignore = ["TL601"]\n')
    r = run_cli("check", "--show-settings", "--ignore", "TL1", program)
    lines = dict(line.split(": ", 1) for line in r.stdout.splitlines())
    assert lines["config"].endswith("torchlint.toml")
    enabled = set(lines[next(k for k in lines if k.startswith("enabled"))].split(", "))
    assert "TL702" in enabled and "TL601" not in enabled and not any(c.startswith("TL1") for c in enabled)
    assert "TL702" not in lines["left out by the default selection"]


def test_rules_listing_shows_category_and_default(run_cli):
    rows = {line.split()[0]: line.split()[1:3] for line in run_cli("rules").stdout.splitlines()}
    assert rows["TL101"] == ["correctness", "default"]
    assert rows["TL702"] == ["modernisation", "opt-in"]


def test_statistics_count_categories_and_what_the_default_hides(program, run_cli):
    r = run_cli("check", "--statistics", "--no-cache", program)
    assert "    1  category: correctness" in r.stdout
    assert "2 findings hidden by the default selection (modernisation 2)" in r.stdout
    assert "TL702" not in r.stdout.split("category:")[0]  # hidden findings are counted, never reported
    assert r.returncode == 1

    widened = run_cli("check", "--statistics", "--select", "ALL", program).stdout
    assert "    2  category: modernisation" in widened
    assert "0 findings hidden by the default selection" in widened


def test_statistics_with_fix_never_touches_hidden_rules(program, run_cli):
    run_cli("check", "--fix", "--statistics", program)
    assert "Variable(" in program.read_text()  # TL702's fix was not applied
