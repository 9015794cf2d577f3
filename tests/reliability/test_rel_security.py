"""torchlint never runs or unpickles the code it analyses (the probe, on request, is the one exception),
and its own security rule, TL601, is one setting away (opt-in by measured precision) and explains the attack.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import torchlint
import torchlint.rules
from torchlint.config import ConfigResolver
from torchlint.registry import known_codes, rules

PACKAGE = Path(torchlint.__file__).resolve().parent
RULES = Path(torchlint.rules.__file__).resolve().parent  # inside PACKAGE when installed, beside it when editable
SOURCES = sorted(
    {p for root in (PACKAGE, RULES) for p in root.rglob("*.py") if "probe" not in p.relative_to(root).parts}
)
DANGEROUS_MODULES = {"pickle", "cPickle", "dill", "cloudpickle", "marshal", "shelve", "runpy", "joblib", "code"}
DANGEROUS_CALLS = {
    "eval",
    "exec",
    "compile",
    "__import__",
    "execfile",
    "importlib.import_module",
    "importlib.util.spec_from_file_location",
    "importlib.machinery.SourceFileLoader",
    "torch.load",
    "os.system",
    "os.popen",
    "os.execv",
    "os.execvp",
    "os.spawnv",
    "subprocess.run",
    "subprocess.Popen",
    "subprocess.call",
    "subprocess.check_output",
    "asyncio.create_subprocess_exec",
    "asyncio.create_subprocess_shell",
    "numpy.load",
}
# (file relative to its package root, call): why it cannot run analysed code.
ALLOWED = {
    ("cli.py", "importlib.import_module"): "imports `torchlint.lsp` / `torchlint.probe.cli` from a fixed table",
    ("rules/__init__.py", "importlib.import_module"): "rules/__init__.py imports its own family modules",
    ("engine/runner.py", "compile"): "ast.PyCF_ONLY_AST: a syntax check that builds a tree and runs nothing",
    (
        "engine/core/walk.py",
        "exec",
    ): "a child lister per libcst node class, generated from that class's own dataclass field names (never from analysed text)",
    ("reporters/locations.py", "subprocess.run"): "runs `git rev-parse --show-toplevel` for SARIF and github paths",
    ("lsp/probe_runner.py", "asyncio.create_subprocess_exec"): "runs `torchlint probe` on the user's command",
}


def _dotted(node: ast.AST, aliases: dict[str, str]) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(aliases.get(node.id, node.id))
    return ".".join(reversed(parts))


def _uses(path: Path) -> set[tuple[str, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    aliases: dict[str, str] = {}
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                aliases[(a.asname or a.name).split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
                if a.name.split(".")[0] in DANGEROUS_MODULES:
                    found.add(("import", a.name))
        elif isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                aliases[a.asname or a.name] = f"{node.module}.{a.name}"
            if node.module.split(".")[0] in DANGEROUS_MODULES:
                found.add(("import", node.module))
        elif isinstance(node, ast.Call):
            name = _dotted(node.func, aliases)
            if name in DANGEROUS_CALLS:
                found.add(("call", name))
    return found


def _rel(path: Path) -> str:
    """The same name whatever the install layout: `rules/x.py` for rules, else package-relative."""
    if path.is_relative_to(RULES):
        return "rules/" + path.relative_to(RULES).as_posix()
    return path.relative_to(PACKAGE).as_posix()


def test_the_scan_sees_what_it_looks_for(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import pickle as p\nfrom importlib import import_module as im\nimport subprocess as s\n"
        "im(x)\neval(y)\ns.Popen(z)\n"
    )
    assert _uses(bad) == {
        ("import", "pickle"),
        ("call", "importlib.import_module"),
        ("call", "eval"),
        ("call", "subprocess.Popen"),
    }


@pytest.mark.parametrize("path", SOURCES, ids=_rel)
def test_no_unpickling_or_code_execution_outside_the_probe(path):
    rel = _rel(path)
    uses = {u for u in _uses(path) if (rel, u[1]) not in ALLOWED}
    assert not uses, f"{rel}: {sorted(uses)} (torchlint must never run or unpickle analysed code)"


EVIL = "import os\nopen({marker!r}, 'w').write('executed')\nos.system('touch {marker}-os')\n"


@pytest.fixture
def booby_trapped(tmp_path):
    """A project whose every file writes a marker if it is ever executed or imported."""
    proj = tmp_path / "proj"
    proj.mkdir()
    markers = tmp_path / "markers"
    markers.mkdir()
    names = [
        "train",
        "conftest",
        "setup",
        "sitecustomize",
        "torch",
        "libcst",
        "tomllib",
        "pathspec",
        "pygls",
        "lsprotocol",
        "typing_extensions",
        "torchlint_plugin",
    ]
    for name in names:
        (proj / f"{name}.py").write_text(EVIL.format(marker=str(markers / name)) + "import torch\nx = torch.load(p)\n")
    (proj / "nb.ipynb").write_text(
        json.dumps(
            {
                "cells": [
                    {
                        "cell_type": "code",
                        "metadata": {},
                        "outputs": [],
                        "execution_count": None,
                        "source": EVIL.format(marker=str(markers / "notebook")),
                    }
                ],
                "metadata": {},
                "nbformat": 4,
                "nbformat_minor": 5,
            }
        )
    )
    (proj / "pyproject.toml").write_text('[tool.torchlint]\nselect = ["TL6"]\n')
    (proj / "model.pt").write_bytes(b"\x80\x04cos\nsystem\n(Vtouch " + str(markers / "pickle").encode() + b"\ntR.")
    return proj, markers


@pytest.mark.parametrize(
    "how", [["-m", "torchlint"], [str(Path(sys.executable).parent / "torchlint")]], ids=["module", "script"]
)
@pytest.mark.parametrize("mode", [[], ["--fix"], ["--diff"], ["-j", "2"]])
def test_linting_never_executes_the_project(booby_trapped, how, mode):
    proj, markers = booby_trapped
    cmd = how if len(how) == 1 else [sys.executable, *how]
    r = subprocess.run(
        [*cmd, "check", "--no-cache", "-q", *mode, "."], cwd=proj, capture_output=True, text=True, timeout=300
    )
    assert not list(markers.iterdir()), f"analysed code ran: {sorted(p.name for p in markers.iterdir())}"
    assert r.returncode in (0, 1), r.stderr[-2000:]
    assert mode == ["--diff"] or "TL601" in r.stdout or mode == ["--fix"], r.stdout[-2000:]


def test_tl601_is_one_setting_away_and_explains_the_attack(tmp_path):
    """Opt-in for its precision on code loading its own checkpoints; a project that loads others' files selects it."""

    def selected() -> tuple[str, ...]:
        return ConfigResolver(known_codes()).for_path(tmp_path / "x.py").selection(tmp_path / "x.py", rules()).codes

    assert "TL601" not in selected()
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\nextend-select = ["TL601"]\n')
    assert "TL601" in selected()
    assert "model hubs" in rules()["TL601"].opt_in
    why = rules()["TL601"].why.lower()
    assert "pickle" in why and "code execution" in why and "weights_only=true" in why
    doc = (Path(__file__).resolve().parents[2] / "docs" / "rules" / "TL601.md").read_text(encoding="utf-8").lower()
    assert "pickle" in doc and "weights_only=true" in doc
