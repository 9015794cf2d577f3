"""TL505 workers-over-python-objects beyond its embedded examples."""

from __future__ import annotations

from pathlib import Path

from torchlint.engine import lint_text
from torchlint.registry import rules

DATASET = (
    "from torch.utils.data import Dataset\n\n\nclass Lines(Dataset):\n"
    "    def __init__(self, path):\n        self.rows = []\n        for line in open(path):\n"
    "            self.rows.append(line.split())\n\n    def __getitem__(self, i):\n        return self.rows[i]\n"
)


def test_a_dataset_class_in_another_project_file(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "data.py").write_text(DATASET)
    main = tmp_path / "train.py"
    main.write_text(
        "from torch.utils.data import DataLoader\nfrom data import Lines\nloader = DataLoader(Lines('x'), num_workers=3)\n"
    )
    got = lint_text(str(main), main.read_text(), [rules()["TL505"]]).findings
    assert [(f.line, f.code) for f in got] == [(3, "TL505")]
    assert "data.py:6" in got[0].message


def test_positional_num_workers_and_unknown_worker_counts(findings):
    src = DATASET + "from torch.utils.data import DataLoader\n"
    assert len(findings(src + "a = DataLoader(Lines('x'), 8, True, None, None, 2)\n", "TL505")) == 1
    assert findings(src + "b = DataLoader(Lines('x'), num_workers=workers)\n", "TL505") == []
    assert findings(src + "c = DataLoader(Lines('x'))\n", "TL505") == []
