"""Our lean position pass agrees with libcst's PositionProvider, node for node."""

from __future__ import annotations

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from fixture_expectations import FIXTURES
from torchlint.engine.core.node_positions import positions

SOURCES = sorted(FIXTURES.rglob("*.py"))[:40] + [None]
TRICKY = (
    "# header comment\n\n@decorator(\n    x,\n)\nclass A(B):\n    '''doc\n    string'''\n"
    "    def f(self, a: int = 1, *args, **kw) -> None:\n        x = [i for i in y if i]; z = {**kw}\n"
    "        return lambda q: (q +\n            1)\r\n\n\nif x:\n\tpass\nelse:  # c\n    y = f'{a!r:>{w}}'\n"
)


@pytest.mark.parametrize("path", SOURCES, ids=[p.name if p else "tricky" for p in SOURCES])
def test_positions_match_libcst(path):
    text = path.read_text(encoding="utf-8") if path else TRICKY
    module = cst.parse_module(text)
    ref = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    mine = positions(module)
    for node, r in ref.items():
        if isinstance(node, cst.Module):
            continue
        assert mine[node] == ((r.start.line, r.start.column), (r.end.line, r.end.column)), type(node).__name__
    # partial mode: the same ranges inside the chosen top-level statements
    chosen = set(module.body[1::2])
    partial = positions(module, chosen)
    for top in chosen:
        assert partial[top] == mine[top]
