"""The atheris fuzz target, run for a bounded time, and its crash corpus replayed as regressions."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CRASHES = sorted(p for p in (HERE / "corpus" / "fuzz").iterdir() if p.suffix != ".md")
FUZZ_SECONDS = int(os.environ.get("TORCHLINT_FUZZ_SECONDS", "60"))


@pytest.mark.parametrize("path", CRASHES, ids=[p.name for p in CRASHES])
def test_crash_corpus_replays_cleanly(path):
    """Each in a child process: a native crash must fail the test, not pytest."""
    code = "import sys; from invariants import check_input; check_input(open(sys.argv[1], 'rb').read())"
    r = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, timeout=300, cwd=HERE)
    assert r.returncode == 0, f"exit {r.returncode}: {r.stderr.decode(errors='replace')[-3000:]}"


@pytest.mark.skipif(
    importlib.util.find_spec("atheris") is None,
    reason="atheris has wheels only for Linux x86_64, CPython 3.11-3.13 (see the test extra)",
)
def test_atheris_fuzz_run_finds_no_crash(tmp_path):
    before = set((HERE / "corpus" / "fuzz").iterdir())
    r = subprocess.run(
        ["bash", str(ROOT / "fuzz" / "run.sh"), str(FUZZ_SECONDS)],
        capture_output=True,
        text=True,
        timeout=FUZZ_SECONDS + 240,
        env={**os.environ, "PYTHON": sys.executable},
    )
    new = set((HERE / "corpus" / "fuzz").iterdir()) - before
    assert r.returncode == 0 and not new, f"crash inputs written: {sorted(map(str, new))}\n{r.stderr[-4000:]}"
    runs = [line for line in r.stderr.splitlines() if line.startswith("stat::number_of_executed_units")]
    assert runs and int(runs[0].split()[-1]) > 0, r.stderr[-2000:]
    print(runs[0])
