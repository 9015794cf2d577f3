"""TL601 torch-load-without-weights-only beyond its embedded examples: the target torch version."""

from __future__ import annotations

import libcst as cst

from torchlint.engine import fix_text, lint_text
from torchlint.registry import rules

TL601 = [rules()["TL601"]]


def _codes(src: str, version: str | None) -> list[str]:
    return [f.code for f in lint_text("example.py", src, TL601, torch_version=version).findings]


def test_tl601_keeps_a_trailing_comma_layout_parseable():
    src = 'import torch\nsd = torch.load(\n    "m.pt",\n    map_location="cpu",\n)\n'
    out = fix_text("example.py", src, TL601, unsafe=True, torch_version="2.3").text  # its fix is unsafe
    cst.parse_module(out)
    assert "weights_only=True" in out and _codes(out, "2.3") == []


def test_tl601_bare_load_is_flagged_only_before_2_6():
    src = 'import torch\nsd = torch.load("m.pt")\n'
    assert _codes(src, "2.5") == ["TL601"]
    assert _codes(src, "2.6") == [] and _codes(src, "2.13") == []


def test_tl601_message_names_the_target_version():
    (f,) = lint_text("example.py", 'import torch\nsd = torch.load("m.pt")\n', TL601, torch_version="2.4").findings
    assert "torch 2.4" in f.message


def test_tl601_weights_only_false_is_flagged_on_every_version_without_a_fix():
    src = 'import torch\nsd = torch.load("m.pt", weights_only=False)\n'
    for version in ("2.1", "2.6", "2.13"):
        (f,) = lint_text("example.py", src, TL601, torch_version=version).findings
        assert f.fix is None and "weights_only=False" in f.message


def test_tl601_load_inside_safe_globals_is_written_for_the_safe_default():
    src = 'import torch\nwith torch.serialization.safe_globals([MyConfig]):\n    state = torch.load("ckpt.pt")\n'
    assert _codes(src, "2.4") == []


def test_tl601_a_file_the_project_writes_itself_is_not_from_elsewhere(tmp_path):
    """The lit-llama shape: a prepare script saves token lists as `train.pt`, the training script loads them
    (torch 2.0, where the default unpickles). Whatever the project's own save puts in the file (a whole module
    too: that the weights-only default refuses it is TL604's finding), it is no file from elsewhere. A file a
    helper is handed too is still reported."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\ndependencies = ['torch>=2.0,<2.6']\n")
    (tmp_path / "prepare.py").write_text(
        "import torch\nfrom pathlib import Path\n"
        "def prepare(out: Path, rows):\n"
        "    train_set = [{'ids': torch.tensor(r)} for r in rows]\n"
        "    torch.save(train_set, out.parent / 'train.pt')\n"
        "    torch.save(torch.nn.Linear(2, 2), f'{out}/net.pt')\n"
        "    torch.save(rows, 'val.pt')\n"
        "    dump(torch.nn.Linear(2, 2), 'val.pt')  # a helper handed the name may save anything\n"
    )
    # a test's own file in a fresh temporary directory is another file, whatever writes it
    (tmp_path / "test_io.py").write_text(
        "import tempfile\nfrom pathlib import Path\nimport torch\n"
        "def test_roundtrip(tmp_path):\n    dump(torch.nn.Linear(2, 2), str(tmp_path / 'train.pt'))\n"
        "def test_lazy():\n    with tempfile.TemporaryDirectory() as d:\n        fn = str(Path(d) / 'train.pt')\n"
        "        dump(torch.nn.Linear(2, 2), fn)\n        assert torch.load(fn) is not None\n"
    )
    src = (
        "import os\nimport torch\n"
        "def load(data_dir):\n"
        "    train = torch.load(os.path.join(data_dir, 'train.pt'))\n"
        "    net = torch.load(f'{data_dir}/net.pt')\n"
        "    val = torch.load(os.path.join(data_dir, 'val.pt'))\n"
        "    return train, net, val\n"
    )
    path = tmp_path / "finetune.py"
    path.write_text(src)
    assert [f.line for f in lint_text(str(path), src, TL601).findings] == [6]


def test_tl601_how_a_notebook_or_script_writes_its_own_file(tmp_path):
    """The shapes of the fifth unseen set's own-file loads: a suffixless literal name, a path concatenated over
    two lines, an existence check before the save, a file object of `open()` handed to `torch.save`."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\ndependencies = ['torch>=2.0,<2.6']\n")
    src = (
        "import os\nimport torch\n"
        "torch.save(x, 'x-file')\nx2 = torch.load('x-file')\n"
        "torch.save(model.state_dict(), data_path + 'birds.pt')\n"
        "sd = torch.load(data_path\n    + 'birds.pt')\n"
        "if not os.path.exists('vocab.pt'):\n    torch.save(vocab, 'vocab.pt')\nelse:\n    vocab = torch.load('vocab.pt')\n"
        "with open('points.t', 'wb') as f:\n    torch.save(points, f)\npoints = torch.load('points.t')\n"
        "url_file = 'hub.pt'\nurllib.request.urlretrieve(URL, 'hub.pt')\ntorch.save(y, url_file)\nz = torch.load('hub.pt')\n"
    )
    path = tmp_path / "nb.py"
    path.write_text(src)
    assert [f.line for f in lint_text(str(path), src, TL601).findings] == [18]  # a download fills hub.pt too
