#!/usr/bin/env bash
# Install torchlint with its test dependencies into a fresh virtual environment
# and run every test: Python (pytest) and the VS Code extension.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${TORCHLINT_TEST_VENV:-.venv-test}"
python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip
# torch==2.13.0 is the CPU build the probe tests run against.
"$VENV/bin/python" -m pip install -q "torch==2.13.0" ".[test,server]"
export PATH="$PWD/$VENV/bin:$PATH"
"$VENV/bin/python" -m pytest "$@"
if [ -x extension/scripts/test.sh ]; then
  extension/scripts/test.sh
fi
