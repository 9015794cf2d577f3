"""`--fix` never corrupts a file.

Every fixable rule's examples, in every file dress (CRLF, BOM, a declared
latin-1 encoding, comments around the code): the written file re-parses, keeps
its encoding, BOM and line endings, leaves unrelated lines byte-identical and a
second `--fix` changes nothing. The write itself is atomic: a process killed at
any point of it leaves the old file or the new one; a file edited meanwhile, or
reached through a symlink, is never clobbered.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from invariants import check_fix, parses
from programs import FIXTURE_FILES

from torchlint import checker
from torchlint.engine import fix_text
from torchlint.engine.semantic.target_version import NEWEST
from torchlint.registry import rules

CODES = tuple(rules())
EXAMPLES = [  # the INVALID examples whose fix `--fix --unsafe-fixes` applies, with the torch they assume
    (code, i, ex.source, ex.torch_version)
    for code, cls in rules().items()
    for i, ex in enumerate(cls.INVALID)
    if ex.fixed is not None
    and fix_text("example.py", ex.source, [cls], unsafe=True, torch_version=ex.torch_version).applied
]
HEAD = "# head: café, keep me   \n"
TAIL = "\n#   tail stays\t\n"
DRESSES = {
    "lf": lambda text: (HEAD + text + TAIL).encode("utf-8"),
    "crlf": lambda text: (HEAD + text + TAIL).replace("\n", "\r\n").encode("utf-8"),
    "bom_crlf": lambda text: b"\xef\xbb\xbf" + (HEAD + text + TAIL).replace("\n", "\r\n").encode("utf-8"),
    "latin1": lambda text: ("# -*- coding: latin-1 -*-\n" + HEAD + text + TAIL).encode("latin-1"),
}


def fix_file(path: Path) -> checker.FileResult:
    return checker.run_job(checker.Job(str(path), CODES, (), "fix", unsafe_fixes=True))


@pytest.mark.parametrize("dress", sorted(DRESSES))
@pytest.mark.parametrize("code,i,text,version", EXAMPLES, ids=[f"{c}-{i}" for c, i, _, _ in EXAMPLES])
def test_fix_keeps_file_dress_and_is_idempotent(tmp_path, code, i, text, version, dress):
    original = DRESSES[dress](text)
    # the project around the file targets the torch the example is linted at (without one: the newest, as
    # an example outside any project is; the suite's default target, 2.1, would change what fires)
    target = version or ".".join(map(str, NEWEST))
    (tmp_path / "torchlint.toml").write_text(f'torch-version = "{target}"\n')
    f = tmp_path / "example.py"
    f.write_bytes(original)
    f.chmod(0o640)
    result = fix_file(f)
    assert result.error is None, result.error
    new = f.read_bytes()
    assert result.fixed >= 1 and new != original, f"{code} offered no fix in {dress} dress"
    encoding = "latin-1" if dress == "latin1" else "utf-8"
    body = new.decode(encoding)
    assert body.startswith("\ufeff") == original.startswith(b"\xef\xbb\xbf")
    body = body.lstrip("\ufeff")
    assert parses(body)
    if "crlf" in dress:
        assert body.count("\n") == body.count("\r\n"), "a bare LF crept into a CRLF file"
    nl = "\r\n" if "crlf" in dress else "\n"
    declaration = "# -*- coding: latin-1 -*-" + nl if dress == "latin1" else ""
    assert body.startswith(declaration + HEAD.replace("\n", nl)), "the head comment was changed"
    assert body.endswith(TAIL.replace("\n", nl)), "the tail comment was changed"
    assert stat.S_IMODE(f.stat().st_mode) == 0o640, "permissions kept"
    again = fix_file(f)
    assert again.fixed == 0 and f.read_bytes() == new, "a second --fix changed the file"
    left = [p.name for p in tmp_path.iterdir() if p.name != "torchlint.toml"]
    assert left == ["example.py"], "no temporary file left behind"


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=[p.name for p in FIXTURE_FILES])
def test_fixture_fixes_touch_only_their_lines(path):
    check_fix(path.read_text(encoding="utf-8"))


BUGGY = b"import torch\r\ny = torch.log(1 + p)  # keep\r\n"
FIXED = b"import torch\r\ny = torch.log1p(p)  # keep\r\n"
# Run `torchlint check --fix` (TL801, opt-in, selected) in a child that SIGKILLs itself at one point of write_atomic.
KILLER = """
import os, signal, sys
from torchlint import cli
stage, path = sys.argv[1], sys.argv[2]
die = lambda: os.kill(os.getpid(), signal.SIGKILL)
real_fdopen, real_replace = os.fdopen, os.replace

class HalfWriter:
    def __init__(self, fh): self.fh = fh
    def __enter__(self): return self
    def __exit__(self, *a): return False
    def write(self, data):
        self.fh.write(data[: len(data) // 2]); self.fh.flush(); die()

if stage == "mid-write":
    def fdopen(fd, mode="r", *args):
        fh = real_fdopen(fd, mode, *args)
        return HalfWriter(fh) if "w" in mode else fh
    os.fdopen = fdopen
elif stage == "before-rename":
    os.replace = lambda *a: die()
elif stage == "after-rename":
    os.replace = lambda *a: (real_replace(*a), die())
sys.exit(cli.main(["check", "--no-cache", "-q", "--extend-select", "TL801", "--fix", "--unsafe-fixes", path]))
"""


@pytest.mark.parametrize("stage", ["mid-write", "before-rename", "after-rename"])
def test_killed_fix_leaves_old_or_new_file(tmp_path, stage):
    f = tmp_path / "train.py"
    f.write_bytes(BUGGY)
    r = subprocess.run([sys.executable, "-c", KILLER, stage, str(f)], capture_output=True, timeout=300)
    assert r.returncode == -signal.SIGKILL, (r.returncode, r.stderr[-2000:])
    assert f.read_bytes() == (FIXED if stage == "after-rename" else BUGGY)
    leftovers = [p.name for p in tmp_path.iterdir() if p.name != "train.py"]
    assert all(n.endswith(".torchlint") for n in leftovers), leftovers  # never picked up as source


def test_file_edited_during_fix_is_not_overwritten(tmp_path, monkeypatch):
    import torchlint.engine as engine

    f = tmp_path / "train.py"
    f.write_bytes(BUGGY)
    real = engine.fix_text

    def edit_while_fixing(*args, **kwargs):
        f.write_bytes(b"# the user saved this meanwhile\n")
        return real(*args, **kwargs)

    monkeypatch.setattr(engine, "fix_text", edit_while_fixing)
    result = fix_file(f)
    assert result.error and "changed on disk" in result.error and result.fixed == 0
    assert f.read_bytes() == b"# the user saved this meanwhile\n"


def test_file_edited_while_temp_file_is_written_is_not_overwritten(tmp_path, monkeypatch):
    """The window between the 'unchanged?' check and the rename (fsync can take long)."""
    f = tmp_path / "train.py"
    f.write_bytes(BUGGY)
    real_fsync = os.fsync

    def save_meanwhile(fd):
        real_fsync(fd)
        if not f.read_bytes().startswith(b"# saved"):
            f.write_bytes(b"# saved by the editor during the fsync\n")

    monkeypatch.setattr(os, "fsync", save_meanwhile)
    result = fix_file(f)
    assert result.error and "changed on disk" in result.error
    assert f.read_bytes() == b"# saved by the editor during the fsync\n"


def test_fix_through_symlink_keeps_the_link(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    target = real / "train.py"
    target.write_bytes(BUGGY)
    link = tmp_path / "train.py"
    link.symlink_to(target)
    result = fix_file(link)
    assert result.error is None and result.fixed == 1
    assert link.is_symlink(), "the symlink was replaced by a regular file"
    assert target.read_bytes() == FIXED
    assert sorted(p.name for p in real.iterdir()) == ["train.py"]


def test_diff_counts_lines_as_python_does(tmp_path):
    """Form feeds and other str.splitlines() breaks inside a line must not split it in --diff."""
    import re

    f = tmp_path / "ff.py"
    f.write_bytes(b"import torch\n\x0c\nx = 1\x0c  # ff\x1c\ny = torch.log(1 + p)\n")
    diff = checker.run_job(checker.Job(str(f), CODES, (), "diff", unsafe_fixes=True)).diff
    hunks = re.split(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@\n", diff, flags=re.M)
    assert len(hunks) == 4, diff
    old_count, new_count, body = int(hunks[1] or 1), int(hunks[2] or 1), hunks[3].split("\n")[:-1]
    assert len([b for b in body if b[:1] in " -"]) == old_count, diff
    assert len([b for b in body if b[:1] in " +"]) == new_count, diff
