"""Hypothesis strategies for programs the rules actually look at.

hypothesmith's grammar-driven programs rarely mention torch, so most rules never
fire on them. These strategies build programs out of the rules' own VALID/INVALID
examples and the fixture programs, nested at random under the headers training
code uses (loops, functions, nn.Module classes, `with torch.no_grad()`), with
comments, blank lines, tabs and line endings varied; and they mutate whole
fixtures the way an editor buffer looks mid-edit (lines deleted, swapped,
duplicated, truncated mid-token).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from hypothesis import strategies as st

from torchlint.registry import rules

ROOT = Path(__file__).resolve().parents[2]
FIXTURE_FILES = sorted((ROOT / "fixtures").rglob("*.py"))
FIXTURES = [p.read_text(encoding="utf-8") for p in FIXTURE_FILES]


def _snippets() -> list[str]:
    out = []
    for cls in rules().values():
        out.append(cls.example)
        if cls.fix_example:
            out.append(cls.fix_example)
        out.extend(cls.VALID)
        out.extend(ex.source for ex in cls.INVALID)
    return [textwrap.dedent(s).strip("\n") + "\n" for s in out if s.strip()]


SNIPPETS = _snippets()
HEADERS = [
    "for batch in loader:",
    "for epoch in range(3):",
    "while True:",
    "def train(model, loader, optimizer):",
    "def forward(self, x):",
    "class Net(torch.nn.Module):",
    "class Plain:",
    "with torch.no_grad():",
    "with torch.autocast('cuda'):",
    "if __name__ == '__main__':",
    "try:",
    "async def step():",
]


def _nest(code: str, header: str, indent: str) -> str:
    body = textwrap.indent(code, indent, lambda line: True)
    out = f"{header}\n{body}"
    if header == "try:":
        out += "except Exception:\n" + indent + "pass\n"
    return out


@st.composite
def torch_programs(draw) -> str:
    """A program assembled from rule examples: valid Python, torch-heavy."""
    indent = draw(st.sampled_from(["    ", "  ", "\t"]))
    parts = []
    for _ in range(draw(st.integers(1, 5))):
        code = draw(st.sampled_from(SNIPPETS))
        for _ in range(draw(st.integers(0, 3))):
            code = _nest(code, draw(st.sampled_from(HEADERS)), indent)
        if draw(st.booleans()):
            code = f"# {draw(st.text(alphabet='abc xyz#:é', max_size=12))}\n" + code
        parts.append(code)
    program = "import torch\n" + "\n".join(parts)
    if draw(st.booleans()):
        program = program.replace("\n", "\r\n")
    return program


@st.composite
def mutated_fixtures(draw) -> str:
    """A fixture or snippet with lines deleted, swapped, duplicated or cut mid-token."""
    text = draw(st.sampled_from(FIXTURES + SNIPPETS))
    lines = text.splitlines(keepends=True)
    for _ in range(draw(st.integers(1, 4))):
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        op = draw(st.sampled_from(["delete", "swap", "duplicate", "truncate", "dedent", "cut"]))
        if op == "delete":
            del lines[i]
        elif op == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "duplicate":
            lines.insert(i, lines[i])
        elif op == "truncate":  # the buffer ends mid-token, as while typing
            cut = draw(st.integers(0, len(lines[i])))
            lines = lines[:i] + [lines[i][:cut]]
        elif op == "dedent":
            lines[i] = lines[i].lstrip(" \t")
        else:  # a line cut in two mid-token
            cut = draw(st.integers(0, len(lines[i])))
            lines[i] = lines[i][:cut] + "\n" + lines[i][cut:]
    return "".join(lines)
