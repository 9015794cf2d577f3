"""bench/fix_report.py: one hunk per fix, counted per rule and applicability."""

from __future__ import annotations

from bench.fix_report import report, run_verdict

TRAIN = """\
import torch
model = torch.nn.Linear(2, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    torch.nn.functional.mse_loss(model(x), y).backward()
    opt.step()
sd = torch.load("ckpt.pt")
"""


def test_report_lists_each_fix_as_a_hunk_with_counts(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHLINT_TORCH_VERSION", "2.1")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "train.py").write_text(TRAIN)
    (repo / ".hidden").mkdir()
    (repo / ".hidden" / "skip.py").write_text(TRAIN)
    text = report([repo])
    assert "| TL101 | 1 | 0 |" in text and "| TL601 | 0 | 1 |" in text
    assert "## TL101 (safe) repo/train.py" in text and "+    opt.zero_grad()" in text
    assert "BREAKS COMPILATION" not in text and ".hidden" not in text


def test_run_verdicts(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("print(1)\n")
    assert run_verdict(script, "print(1)\n", 60) == "identical"
    assert run_verdict(script, "raise SystemExit(3)\n", 60) == "broken"
    assert run_verdict(script, "print(2)\n", 60) == "changed"
    script.write_text("import missing_module\n")
    assert run_verdict(script, "print(1)\n", 60) == "fixed"
    assert run_verdict(script, "import missing_module\n", 60) == "not runnable"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.py"]  # the fixed copy is gone


def test_a_file_that_did_not_compile_is_not_broken_by_a_fix(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHLINT_TORCH_VERSION", "2.1")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "train.py").write_text(TRAIN + "def late():\n    from __future__ import annotations\n")
    text = report([repo])
    assert "## TL101 (safe) repo/train.py" in text and "BREAKS COMPILATION" not in text


def test_run_lists_each_script_with_its_verdict(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "s.py").write_text("import torch\nm = torch.nn.Linear(2, 2)\nprint(m.forward(torch.ones(1, 2)).shape)\n")
    text = report([repo], seconds=120)
    assert "- identical: 1" in text and "| repo/s.py | identical |" in text
    assert sorted(p.name for p in repo.iterdir()) == ["s.py"]
