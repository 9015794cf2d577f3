"""The file system's hostile cases through the real CLI: FIFOs, symlink loops, dangling
links, a directory named like a module, unreadable files, plus every corpus file on disk.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest
from invariants import parses
from test_rel_hostile_inputs import ALL

from selecting import extend_select


@pytest.fixture(scope="module")
def hostile_tree(tmp_path_factory):
    """Every corpus file on disk, plus the things only a file system can hold."""
    root = tmp_path_factory.mktemp("hostile")
    # a project targeting torch 2.1 that selects TL601: a bare torch.load is a finding to look for
    (root / "pyproject.toml").write_text(
        "[project]\nname = 'hostile'\ndependencies = ['torch>=2.1']\n\n" + extend_select("TL601")
    )
    for name, data in ALL.items():
        (root / name).write_bytes(data)
    (root / "dir_named.py").mkdir()
    (root / "dir_named.py" / "inner.py").write_text("import torch\nsd = torch.load(p)\n")
    (root / "loop_a.py").symlink_to("loop_b.py")
    (root / "loop_b.py").symlink_to("loop_a.py")
    (root / "dangling.py").symlink_to("does-not-exist.py")
    (root / "sub").mkdir()
    (root / "sub" / "up").symlink_to("..")  # a directory symlink loop
    os.mkfifo(root / "fifo.py")  # reading it would block forever
    return root


def _json(result) -> list[dict]:
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode in (0, 1), (result.returncode, result.stderr[-2000:])
    return json.loads(result.stdout)


def test_cli_walks_the_hostile_tree(hostile_tree, run_cli):
    items = _json(run_cli("check", "--no-cache", "-q", "--output-format", "json", hostile_tree))
    by_name: dict[str, list[dict]] = {}
    for item in items:
        by_name.setdefault(Path(item["path"]).name, []).append(item)
    assert not [i for i in items if "internal error" in i["message"]]
    assert by_name["fifo.py"][0]["code"] == "TL000" and "not a regular file" in by_name["fifo.py"][0]["message"]
    assert "symbolic links" in by_name["loop_a.py"][0]["message"]
    assert "No such file" in by_name["dangling.py"][0]["message"]
    assert "NUL" in by_name["nul_bytes.py"][0]["message"]
    assert "0xff" in by_name["invalid_utf8.py"][0]["message"]
    assert [i["code"] for i in by_name["inner.py"]] == ["TL601"], "a directory named x.py is walked, not read"
    assert [i["line"] for i in by_name["bom_crlf.py"] if i["code"] == "TL601"] == [2]
    assert len([i for i in by_name["twenty_thousand_lines.py"] if i["code"] == "TL601"]) == 20


def test_cli_explicit_special_paths(hostile_tree, run_cli):
    for name, message in [
        ("fifo.py", "not a regular file"),
        ("dangling.py", "No such file"),
        ("loop_a.py", "symbolic links"),
    ]:
        items = _json(run_cli("check", "--no-cache", "-q", "--output-format", "json", hostile_tree / name))
        assert [i["code"] for i in items] == ["TL000"] and message in items[0]["message"], items


def test_cli_fix_on_hostile_tree_keeps_every_file_parseable(hostile_tree, run_cli, tmp_path):
    tree = tmp_path / "copy"
    # the 20,000-line file is fixed by the engine tests; here it would only add minutes
    shutil.copytree(hostile_tree, tree, symlinks=True, ignore=shutil.ignore_patterns("fifo.py", "twenty_thousand*"))
    os.mkfifo(tree / "fifo.py")
    before = {p: p.read_bytes() for p in tree.rglob("*.py") if p.is_file() and not p.is_symlink()}
    r = run_cli("check", "--no-cache", "-q", "--fix", tree)
    assert r.returncode in (0, 1) and "Traceback" not in r.stderr, r.stderr[-2000:]
    for path, old in before.items():
        new = path.read_bytes()
        if new != old:  # only files that parsed get fixed, and they still parse
            assert parses(new.decode("utf-8-sig")), path
            assert new.startswith(b"\xef\xbb\xbf") == old.startswith(b"\xef\xbb\xbf"), path
            assert (b"\r\n" in new) == (b"\r\n" in old), path
    assert stat.S_ISFIFO(os.stat(tree / "fifo.py").st_mode), "the FIFO was left alone"


@pytest.mark.skipif(
    os.geteuid() == 0,
    reason="unreadable file (chmod 000): root reads it anyway; "
    "the FIFO and dangling-symlink cases cover unreadable paths honestly",
)
def test_cli_permission_denied(tmp_path, run_cli):
    f = tmp_path / "secret.py"
    f.write_text("x = 1\n")
    f.chmod(0)
    items = _json(run_cli("check", "--no-cache", "-q", "--output-format", "json", f))
    assert items[0]["code"] == "TL000" and "Permission denied" in items[0]["message"]
