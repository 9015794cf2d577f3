"""Every fix emits valid Python or nothing (issue 27 item 1).

The engine drops a fix whose edits do not re-parse or change a statement they do not touch
(engine/core/fix_check.py). These tests prove that check, and then, with the check switched off,
that no rule builds such a fix in the first place: every fix and alternative of every rule
over the fixtures, the VALID/INVALID examples and synthetic spellings of them.
"""

from __future__ import annotations

import ast

import libcst
import pytest
from fix_variants import variants

from fixture_expectations import FIXTURES, fixture_files
from torchlint.engine import fix_text, lint_text, runner
from torchlint.engine.core import node_positions
from torchlint.engine.core.fix_check import keeps_parse
from torchlint.engine.core.source import apply_edits
from torchlint.engine.rule import SAFE, Replace, Rule, fix
from torchlint.findings import Edit
from torchlint.registry import rules

CATALOGUE = rules()

# The spellings the issue found wrong fixes on, and their neighbours (positional vs keyword).
SYNTHETIC = [
    "import torch.nn.functional as F\ny = F.upsample(x, scale_factor=2, mode='nearest')\n",
    "import torch.nn.functional as F\ny = F.upsample(x, None, 2, 'nearest')\n",
    "import torch\ny = torch.nn.functional.upsample(input=x, size=(4, 4))\n",
    "import torch\nwith torch.cuda.amp.autocast(flag):\n    y = model(x)\n",
    "import torch\nwith torch.cuda.amp.autocast(True, torch.bfloat16):\n    y = model(x)\n",
    "import torch\nwith torch.cuda.amp.autocast(enabled=flag, dtype=torch.bfloat16):\n    y = model(x)\n",
    "import torch\nscaler = torch.cuda.amp.GradScaler(2.0**16, 2.0)\n",
    "import torch\nscaler = torch.cuda.amp.GradScaler(enabled=use_amp)\n",
    "import torch\nq, r = torch.qr(a, some=False)\n",
    "import torch\nm = torch.nn.UpsamplingNearest2d(scale_factor=2)\n",
    "import torch\nm = torch.nn.UpsamplingBilinear2d(None, 2)\n",
    "import torch\nv = torch.ger(a, vec2=b)\n",
    "import torch\nL, piv = torch.lu(A)\n",
    "import torch\nr = torch.matrix_rank(a)\n",
    "import torch\nn = torch.norm(x, p=2, dim=1, keepdim=True)\n",
]


def _sources() -> list[tuple[str, str, str | None]]:
    """(id, text, torch version) of every program the fixes are run over."""
    out = [(f"fixture:{p.relative_to(FIXTURES)}", p.read_text(encoding="utf-8"), None) for p in fixture_files(FIXTURES)]
    out += [(f"synthetic-{i}", src, "2.4") for i, src in enumerate(SYNTHETIC)]
    for code, cls in CATALOGUE.items():
        out += [(f"{code}-valid-{i}", src, None) for i, src in enumerate(cls.VALID)]
        for i, ex in enumerate(cls.INVALID):
            out.append((f"{code}-invalid-{i}", ex.source, ex.torch_version))
            out += [(f"{code}-invalid-{i}-{name}", text, ex.torch_version) for name, text in variants(ex.source)]
    out += [(f"synthetic-{i}-{name}", text, "2.4") for i, src in enumerate(SYNTHETIC) for name, text in variants(src)]
    return out


def test_fix_that_does_not_parse_is_refused():
    call = "f(x, scale_factor=2, mode='nearest')"
    text = f"import torch\ny = {call}\n"
    end = 5 + len(call)
    assert not keeps_parse(text, [Edit(2, 5, 2, end, "g(x, scale_factor=2, , mode='nearest')")])
    assert keeps_parse(text, [Edit(2, 5, 2, end, "g(x, scale_factor=2, mode='nearest')")])


def test_fix_that_moves_a_statement_it_does_not_touch_is_refused():
    text = "for x in xs:\n    step(x)\nlog(x)\n"
    assert not keeps_parse(text, [Edit(3, 1, 3, 1, "    ")])  # `log(x)` slides into the loop
    assert keeps_parse(text, [Edit(2, 12, 2, 12, "  # done(")])  # a comment is harmless
    assert not keeps_parse(text, [Edit(3, 1, 3, 1, "if ready:\n    ")])  # and into a new block
    assert keeps_parse(text, [Edit(3, 1, 3, 1, "    flush()\n")])  # a new last line of the loop body


def test_insertion_after_a_block_s_last_line_is_checked_with_the_block():
    text = "def f():\n    x = 1\n    # end\ny = 2\n"
    assert keeps_parse(text, [Edit(3, 1, 3, 1, "    x += 1\n")])
    assert not keeps_parse(text, [Edit(3, 1, 3, 1, "  x += 1\n")])  # an indentation no block has


def test_columns_are_code_points_on_lines_with_non_ascii_text():
    text = 's = "ü"; t = g(a)\nu = 1\n'
    assert keeps_parse(text, [Edit(1, 14, 1, 18, "h(a)")])
    assert not keeps_parse(text, [Edit(1, 14, 1, 18, "h(a,,)")])


class _BrokenFix(Rule):
    code = "TL999"
    name = "broken-fix"
    message = "a call"
    category = "style"
    summary = what = why = example = "test only"
    fix_safety = "Safe: a test's rule."

    def visit_Call(self, node):
        self.report(node, fix=fix("Break it", Replace(node, "g(x, , y)"), applicability=SAFE))


def test_engine_drops_a_broken_fix_and_the_finding_is_not_fixable():
    text = "y = f(x)\n"
    (finding,) = lint_text("t.py", text, [_BrokenFix]).findings
    assert finding.fix is None
    result = fix_text("t.py", text, [_BrokenFix])
    assert result.text == text and result.applied == 0


@pytest.fixture
def unchecked(monkeypatch):
    """The engine without its check: what the rules themselves build."""
    monkeypatch.setattr(runner, "keeps_parse", lambda *args: True)


def test_every_fix_of_every_rule_emits_valid_python(unchecked):
    bad, checked = [], 0
    everything = list(CATALOGUE.values())
    for name, text, version in _sources():
        for f in lint_text(f"{name}.py", text, everything, torch_version=version).findings:
            for fx in (f.fix, *f.alternatives):
                if fx is None:
                    continue
                checked += 1
                fixed = apply_edits(text, fx.edits)
                try:
                    ast.parse(fixed)
                except SyntaxError:
                    bad.append(f"{name} {f.code}:{f.line} {fx.message!r}: does not parse")
                    continue
                if not keeps_parse(text, fx.edits):
                    bad.append(f"{name} {f.code}:{f.line} {fx.message!r}: changes statements it does not touch")
    assert checked > 500  # the corpus reaches the fixes
    assert bad == [], "\n".join(bad)


def test_position_pass_outline_covers_every_top_level_statement():
    """The runner hands fix_check the top-level statements' lines from its position pass (no CPython
    parse of the whole file in the editor); they must cover what CPython calls each statement."""
    for name, text, _ in _sources():
        module = libcst.parse_module(text)
        outline: list[tuple[int, int]] = []
        node_positions.positions(module, set(module.body[:1]), outline)
        assert len(outline) == len(module.body), name
        spans = [
            ((s.decorator_list[0] if getattr(s, "decorator_list", None) else s).lineno, s.end_lineno)
            for s in ast.parse(text).body
        ]
        assert all(a <= start and end <= b for (a, b), (start, end) in zip(outline, spans)), name
