"""TL504 cuda-in-dataset-worker beyond its embedded examples."""

from __future__ import annotations

from torchlint.engine import lint_text
from torchlint.registry import rules

DATASET = """\
import torch
from torch.utils.data import Dataset
class OnGpu(Dataset):
    def __len__(self):
        return 10
    def __getitem__(self, i):
        return torch.tensor([i]).cuda()
"""


def test_tl504_follows_the_dataset_class_into_another_project_file(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "data.py").write_text(DATASET)
    train = (
        "from torch.utils.data import DataLoader\nfrom data import OnGpu\n"
        "def main():\n    loader = DataLoader(OnGpu(), num_workers=2)\n"
    )
    (tmp_path / "train.py").write_text(train)
    (f,) = lint_text(str(tmp_path / "train.py"), train, [rules()["TL504"]]).findings
    assert f.line == 4 and "data.py:7" in f.message


def test_tl504_silent_without_workers_or_without_cuda(findings):
    no_workers = DATASET + "from torch.utils.data import DataLoader\nloader = DataLoader(OnGpu())\n"
    on_cpu = DATASET.replace(".cuda()", ".to('cpu')") + (
        "from torch.utils.data import DataLoader\nloader = DataLoader(OnGpu(), num_workers=2)\n"
    )
    assert findings(no_workers, "TL504") == [] and findings(on_cpu, "TL504") == []
