#!/usr/bin/env bash
# Fuzz the engine for a bounded time: fuzz/run.sh [SECONDS] (default 60).
# Seeds: fixtures, every rule's examples, the hostile corpus and earlier crashes.
# A crash is written to tests/reliability/corpus/fuzz/ (replayed by the test suite).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_BUDGET="${1:-60}"
PY="${PYTHON:-python}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/corpus" "$WORK/seeds" tests/reliability/corpus/fuzz
"$PY" - "$WORK/seeds" <<'PY'
import sys
from pathlib import Path

sys.path.insert(0, "tests/reliability")
from programs import FIXTURES, SNIPPETS  # noqa: E402

out = Path(sys.argv[1])
for i, text in enumerate(FIXTURES + SNIPPETS):
    (out / f"seed{i}.py").write_text(text, encoding="utf-8")
for p in Path("tests/reliability/corpus").rglob("*"):
    if p.is_file() and p.stat().st_size < 100_000:
        (out / f"corpus-{p.parent.name}-{p.name}").write_bytes(p.read_bytes())
PY
exec "$PY" fuzz/fuzz_engine.py -atheris_runs=0 -max_total_time="$SECONDS_BUDGET" -timeout=60 -rss_limit_mb=4096 \
  -max_len=20000 -print_final_stats=1 -artifact_prefix=tests/reliability/corpus/fuzz/ "$WORK/corpus" "$WORK/seeds"
