"""The engine's layers import only downward: core <- semantic <- flow <- torch <- the facade (context, rule, runner,
fixes, incremental). An analysis that needs another's facts asks a lower layer; nothing imports upward, at run time
or for types, except the listed type-only back-references to `FileContext`, which may only shrink."""

from __future__ import annotations

import ast
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[2] / "server" / "torchlint" / "engine"
LAYERS = ("core", "semantic", "flow", "torch")
FACADE = len(LAYERS)

# Analyses that still name the facade's FileContext in their annotations (type-only imports). Each should take the
# facts it reads instead; remove a module from this list when it does, never add one.
CONTEXT_BACK_REFERENCES = {
    "flow/accumulators.py",
    "flow/calling_context.py",
    "flow/cuda_guards.py",
    "flow/graph_flow.py",
    "flow/loop_events.py",
    "flow/no_grad_callers.py",
    "flow/ranks.py",
    "semantic/dtypes.py",
    "semantic/host_values.py",
    "semantic/values.py",
    "torch/activations.py",
    "torch/checkpoint_consumers.py",
    "torch/head_width.py",
    "torch/model_mode.py",
    "torch/optimizer_params.py",
    "torch/shapes.py",
}


def _rank(module: str) -> int:
    """The layer of `torchlint.engine.<module>` (a dotted remainder, or a top-level module name)."""
    first = module.split(".")[0]
    return LAYERS.index(first) if first in LAYERS else FACADE


def _imports(path: Path) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("torchlint.engine"):
            rest = node.module.removeprefix("torchlint.engine").lstrip(".")
            out += [(node.lineno, rest)] if rest else [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            out += [
                (node.lineno, a.name.removeprefix("torchlint.engine."))
                for a in node.names
                if a.name.startswith("torchlint.engine.")
            ]
    return out


def _upward() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in sorted(ENGINE.rglob("*.py")):
        rel = path.relative_to(ENGINE).as_posix()
        mine = LAYERS.index(rel.split("/")[0]) if "/" in rel else FACADE
        for line, target in _imports(path):
            if _rank(target) > mine:
                found.setdefault(rel, []).append(f"line {line}: {target}")
    return found


def test_every_engine_module_sits_in_a_layer():
    loose = sorted(
        p.name
        for p in ENGINE.glob("*.py")
        if p.stem not in {"__init__", "context", "rule", "runner", "fixes", "incremental"}
    )
    assert loose == [], f"put these in a layer package ({', '.join(LAYERS)}): {loose}"


def test_imports_only_go_down_a_layer():
    upward = _upward()
    allowed = {
        m
        for m, targets in upward.items()
        if m in CONTEXT_BACK_REFERENCES and all(t.endswith(": context") for t in targets)
    }
    assert {m: t for m, t in upward.items() if m not in allowed} == {}
    stale = CONTEXT_BACK_REFERENCES - allowed
    assert not stale, f"these no longer name FileContext: drop them from the list: {sorted(stale)}"


def test_the_check_sees_an_upward_import(tmp_path, monkeypatch):
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "bad.py").write_text("from torchlint.engine.flow.blocks import Blocks\n")
    monkeypatch.setitem(globals(), "ENGINE", tmp_path)
    assert _upward() == {"core/bad.py": ["line 1: flow.blocks"]}
