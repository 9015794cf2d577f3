"""The import/call index answers "who imports me" and "who calls X" as a scan of every file does."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from torchlint.engine.semantic.import_index import facts
from torchlint.engine.semantic.project import Project

MODULES = ["train", "pkg/__init__", "pkg/model", "pkg/data", "pkg/sub/__init__", "pkg/sub/layers", "tools/run"]
FUNCTIONS = ["fit", "build", "step"]


def _dotted(module: str) -> str:
    return module.removesuffix("/__init__").replace("/", ".")


def _import_line(importer: str, target: str, style: int) -> str:
    """One way to import `target` from `importer` (absolute, aliased, from-import, relative, multi-line)."""
    dotted = _dotted(target)
    head, _, last = dotted.rpartition(".")
    package = _dotted(importer).rpartition(".")[0] if not importer.endswith("__init__") else _dotted(importer)
    if style == 0:
        return f"import {dotted}"
    if style == 1:
        return f"import {dotted} as alias_{last}"
    if style == 2 and head:
        return f"from {head} import (\n    {last},  # a comment\n)"
    if style == 3 and head and package and head.startswith(package) and importer.startswith("pkg"):
        rest = head[len(package) :].lstrip(".")
        return f"from .{rest} import {last}"
    if style == 4:
        return f"def later():\n    from {dotted} import {FUNCTIONS[0]}\n    return {FUNCTIONS[0]}"
    return f"try:\n    import {dotted}\nexcept ImportError:\n    pass"


def _call_line(name: str, style: int) -> str:
    return [f"{name}()", f"obj.{name}(1)", f"x = {name} (\n    2)", f"y = obj.{name} \\\n    (3)"][style]


graphs = st.lists(
    st.tuples(
        st.sampled_from(MODULES),
        st.sampled_from(MODULES),
        st.integers(0, 5),
        st.sampled_from(FUNCTIONS),
        st.integers(0, 3),
    ),
    max_size=14,
)


def _write(root: Path, edges: list[tuple[str, str, int, str, int]]) -> None:
    texts: dict[str, list[str]] = {m: [] for m in MODULES}
    for importer, target, style, called, call_style in edges:
        if importer != target:
            texts[importer].append(_import_line(importer, target, style))
        texts[importer].append(_call_line(called, call_style))
    (root / "pyproject.toml").write_text("[project]\nname = 'p'\nversion = '0'\n")
    for module, lines in texts.items():
        path = root / f"{module}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs)
def test_index_answers_as_a_full_scan(edges):
    root = Path(tempfile.mkdtemp())
    try:
        _write(root, edges)
        project = Project(root)
        every = [s for s in map(project.summary, project.files()) if s is not None]
        for module in MODULES:
            path = root / f"{module}.py"
            importers = project.importers(path)
            assert importers is not None
            assert [s.path for s in importers] == [s.path for s in every if project.imports_module(s, path)]
        for name in FUNCTIONS:
            calling = project.calling(name)
            assert calling is not None
            assert [s.path for s in calling] == [s.path for s in every if name in s.called]
    finally:
        shutil.rmtree(root)


def test_an_edit_reindexes_one_file(tmp_path):
    _write(tmp_path, [("train", "pkg/model", 2, "fit", 0)])
    project = Project(tmp_path)
    model = tmp_path / "pkg/model.py"
    assert [s.path for s in project.importers(model) or []] == [tmp_path / "train.py"]
    project.set_overlay(tmp_path / "tools/run.py", "from pkg.model import fit\nfit()\n")
    assert [s.path for s in project.importers(model) or []] == [tmp_path / "tools/run.py", tmp_path / "train.py"]
    assert [s.path.name for s in project.calling("fit") or []] == ["run.py", "train.py"]


def test_a_save_reindexes_the_file_without_listing_the_project_again(tmp_path):
    _write(tmp_path, [("train", "pkg/model", 2, "fit", 0)])
    project = Project(tmp_path)
    model, run = tmp_path / "pkg/model.py", tmp_path / "tools/run.py"
    assert [s.path for s in project.importers(model) or []] == [tmp_path / "train.py"]
    listing = project.files()
    run.write_text("from pkg import model\n")
    project.forget_files([run])  # the editor's watcher: changed on disk
    assert [s.path for s in project.importers(model) or []] == [run, tmp_path / "train.py"]
    assert project.files() is listing
    created = tmp_path / "tools/new.py"
    created.write_text("from pkg import model\n")
    project.forget_files([created])  # created: the project is listed again
    assert [s.path for s in project.importers(model) or []] == [created, run, tmp_path / "train.py"]
    assert project.files() is not listing


def test_facts_survive_a_restart_on_disk(tmp_path):
    _write(tmp_path, [("train", "pkg/model", 2, "fit", 1)])
    stored = tmp_path / "cache" / "index.json"
    first = Project(tmp_path)
    first.index_file = stored
    assert first.build_index() and stored.is_file()
    second = Project(tmp_path)
    second.index_file = stored
    read: list[Path] = []
    second._indexed_text = lambda p: read.append(p)  # type: ignore[method-assign]  # nothing may be read again
    assert second.build_index()
    assert read == []
    assert [s.path.name for s in second.importers(tmp_path / "pkg/model.py") or []] == ["train.py"]


def test_facts_are_a_superset_of_the_words_that_matter():
    found = facts('"""import nothing"""\nfrom ..a.b import (c,\n  d as e)\nimport f.g as h; k (1)\nm.n  # x\n(2)\n')
    assert {"f", "g", "h", "c", "d", "e"} <= found.words
    assert found.relative == ((2, "a.b"),)
    assert {"k", "n"} <= found.called
    # every way CPython lets a name be called: a comment or a parenthesised callee between name and `(`
    odd = facts("#####\nf  # banner ###\n(1)\n(obj.g)(2)\nh \\\n(3)\nfrom \\\n  pkg import \\\n  mod\n")
    assert {"f", "g", "h"} <= odd.called
    assert {"pkg", "mod"} <= odd.words
    assert found.import_words("top.pkg") == found.words | {"top", "a", "b"}
