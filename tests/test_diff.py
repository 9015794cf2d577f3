"""`--diff` is a patch: `git apply` and `patch -p1` take it, and what they make is
byte for byte what `--fix` writes, for files without a final newline, CRLF, a
BOM, names with spaces, and notebooks (a patch of the .ipynb file itself)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from test_notebooks import SETUP_CELL, TRAIN_CELL, write_lab, write_notebook
from torchlint.checker import unified_diff

LOAD = b"import torch\nsd = torch.load(p)"  # the fix changes the last line, which has no newline


def _torchlint(*args, cwd):
    """The CLI's stdout as bytes: a text capture would turn the patch's CRLF lines into LF."""
    r = subprocess.run([sys.executable, "-m", "torchlint", *args], cwd=cwd, capture_output=True, timeout=300)
    assert r.returncode in (0, 1), r.stderr.decode()
    return r.stdout


def _tree(root, files):
    root.mkdir()
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    return root


def _snapshot(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


CASES = {
    "last line without newline": {"a.py": LOAD},
    "untouched last line without newline": {"a.py": b"import torch\nsd = torch.load(p)\nx = 1"},
    "crlf and bom": {"w.py": b"\xef\xbb\xbfimport torch\r\nsd = torch.load(p)\r\n"},
    "spaces in names, several files": {"my dir/a b.py": LOAD, "c.py": LOAD + b"\n"},
}


def _notebooks(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    write_lab(src / "lab.ipynb")
    one_line = write_notebook(src / "one-line.ipynb", [SETUP_CELL, TRAIN_CELL.rstrip("\n")])
    one_line.write_text(json.dumps(json.loads(one_line.read_text())))  # one line, and no newline after it
    return {p.name: p.read_bytes() for p in src.iterdir()}


@pytest.mark.parametrize("tool", ["git", "patch"])
@pytest.mark.parametrize("case", [*CASES, "notebooks"])
def test_the_diff_applies_to_what_fix_writes(tmp_path, case, tool):
    files = _notebooks(tmp_path) if case == "notebooks" else CASES[case]
    patched, fixed = _tree(tmp_path / "patched", files), _tree(tmp_path / "fixed", files)
    # TL601's fix (the one these files need) is opt-in and unsafe: both runs take the same flags
    flags = ("--no-cache", "--extend-select", "TL601", "--unsafe-fixes")
    diff = _torchlint("check", *flags, "--diff", ".", cwd=patched)
    assert _snapshot(patched) == files, "--diff must not write"
    _torchlint("check", *flags, "--fix", ".", cwd=fixed)
    assert _snapshot(fixed) != files
    if tool == "git":
        subprocess.run(["git", "init", "-q", "."], cwd=patched, check=True)
        r = subprocess.run(["git", "apply", "-"], cwd=patched, input=diff, capture_output=True)
        shutil.rmtree(patched / ".git")
    else:
        r = subprocess.run(["patch", "-p1", "--batch"], cwd=patched, input=diff, capture_output=True)
    assert r.returncode == 0, (diff + r.stderr).decode()
    assert _snapshot(patched) == _snapshot(fixed)


def test_no_newline_at_end_of_file_is_marked():
    assert unified_diff("a.py", b"x = 1\ny = 2", b"x = 1\ny = 3") == (
        "--- a/a.py\n"
        "+++ b/a.py\n"
        "@@ -1,2 +1,2 @@\n"
        " x = 1\n"
        "-y = 2\n"
        "\\ No newline at end of file\n"
        "+y = 3\n"
        "\\ No newline at end of file\n"
    )


def test_a_lone_carriage_return_stays_inside_its_line():
    diff = unified_diff("m.py", b"a\rb\nc\n", b"a\rb\nd\n")
    assert diff == "--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,2 @@\n a\rb\n-c\n+d\n"


def test_a_notebook_diff_is_a_patch_of_the_json(tmp_path, run_cli):
    lab = write_lab(tmp_path / "lab.ipynb")
    diff = run_cli(
        "check", "--no-cache", "--extend-select", "TL601", "--diff", "--unsafe-fixes", "lab.ipynb", cwd=tmp_path
    ).stdout
    patch = diff[: diff.index("lab.ipynb:cell_")]  # the findings that remain follow the patch
    assert patch.startswith("--- a/lab.ipynb\n+++ b/lab.ipynb\n@@ ")
    assert [line for line in patch.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")] == [
        '+    "    optimizer.zero_grad()\\n",',
        "-    \"state = torch.load('weights.pt')\\n\",",
        "+    \"state = torch.load('weights.pt', weights_only=True)\\n\",",
    ]
    assert lab.read_bytes() == write_lab(tmp_path / "again.ipynb").read_bytes()
