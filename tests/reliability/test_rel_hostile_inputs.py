"""A fixed corpus of hostile inputs, through the engine and through the real CLI.

Each must give findings or one TL000 with a clear message, never a traceback,
a hang or a dead process. Files too big to keep in git are generated here.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from invariants import check_fix

CORPUS = Path(__file__).resolve().parent / "corpus" / "hostile"

# Too big to keep in git; the small hostile files live in corpus/hostile/.
GENERATED = {
    "twenty_thousand_lines.py": b"import torch\n"
    + b"".join(
        b'x%d = torch.load("f%d")\n' % (i, i) if i % 1000 == 0 else b"x%d = x%d * 2 + 1  # step\n" % (i, i - 1)
        for i in range(20_000)
    ),
    "one_megabyte_line.py": b"import torch\nx = '" + b"a" * 1_000_000 + b"'; torch.load(p)\n",
}
# name -> (source, does the parser accept it): nesting within and beyond what Python allows.
DEEP = {
    "deep_parens_ok.py": ("x = " + "(" * 150 + "1" + ")" * 150 + "\n", True),
    "deep_parens.py": ("x = " + "(" * 5_000 + "1" + ")" * 5_000 + "\n", False),
    "deep_lists.py": ("x = " + "[" * 3_000 + "]" * 3_000 + "\n", False),
    "deep_unary.py": ("x = " + "-" * 50_000 + "1\n", False),
    "deep_not.py": ("x = " + "not " * 20_000 + "a\n", False),
    "deep_lambda.py": ("x = " + "lambda: " * 20_000 + "1\n", False),
    "long_binop.py": ("import torch\nx = " + "1 + " * 20_000 + "torch.load(p)\n", False),
    "long_attribute_chain.py": ("x = a" + ".b" * 20_000 + "\n", False),
    "long_call_chain.py": ("x = f" + "()" * 20_000 + "\n", False),
    "long_subscripts.py": ("x = a" + "[0]" * 20_000 + "\n", False),
    "long_power.py": ("x = " + "2 ** " * 20_000 + "2\n", False),
    "deep_binop_ok.py": ("import torch\nx = " + "1 + " * 300 + "torch.load(p)\n", True),
}


def _committed() -> dict[str, bytes]:
    """corpus/hostile/NAME.input -> NAME (stored as .input so no linter or hook checks them)."""
    return {p.name.removesuffix(".input"): p.read_bytes() for p in sorted(CORPUS.glob("*.input"))}


ALL = {**_committed(), **GENERATED, **{k: v.encode() for k, (v, _) in DEEP.items()}}


@pytest.mark.parametrize("name", sorted(ALL))
def test_engine_survives(name):
    """In a child process: a parser that overflows its C stack must fail this test, not kill pytest."""
    code = (
        "import sys; from invariants import check_lint_bytes; from torchlint.engine import PARSE_ERROR_CODE as E\n"
        "findings = check_lint_bytes(sys.stdin.buffer.read())\n"
        "print(next((f.message for f in findings if f.code == E), 'parsed'))\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code], input=ALL[name], capture_output=True, timeout=300, cwd=Path(__file__).parent
    )
    assert r.returncode == 0, f"exit {r.returncode}: {r.stderr.decode(errors='replace')[-3000:]}"
    outcome = r.stdout.decode().strip()
    if name in DEEP:
        assert (outcome == "parsed") == DEEP[name][1], outcome
        if outcome != "parsed":
            assert "nested" in outcome, outcome


def test_fix_on_odd_files_is_safe():
    for name in ("tabs.py", "form_feeds.py", "walrus_lambda.py", "deep_binop_ok.py", "no_final_newline.py"):
        data = ALL[name]
        text = data.decode("utf-8")
        fixed, applied = check_fix(text)
        assert applied >= 1, name
