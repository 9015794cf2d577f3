"""atheris target: the engine's lint and fix on arbitrary bytes, as `torchlint check [--fix]` runs them.

Any escaping exception, TL000 "internal error in rule", unparseable or
non-idempotent fix is a crash; atheris writes the input to the artifact prefix
(`fuzz/run.sh` points it at tests/reliability/corpus/fuzz/, which the test suite
replays). A native crash (libcst overflowing its stack) is caught the same way.
"""

from __future__ import annotations

import sys
from pathlib import Path

import atheris

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "reliability"))

with atheris.instrument_imports(include=["torchlint"]):
    from invariants import check_input


def main() -> None:
    atheris.Setup(sys.argv, check_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
