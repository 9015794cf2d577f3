#!/usr/bin/env bash
# Install torchlint with its test dependencies into a fresh virtual environment
# and run every test: Python (pytest, including the probe and real editors as LSP
# clients) and the VS Code extension (unit, end-to-end in code-server, UI smoke).
set -euo pipefail
cd "$(dirname "$0")/.."
START=$SECONDS

# Editors the language-server tests drive as independent clients (Debian packages).
need=()
command -v nvim >/dev/null || need+=(neovim)
command -v emacs >/dev/null || need+=(emacs-nox elpa-eglot)
if [ "${#need[@]}" -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}"
  else
    echo "test.sh: ${need[*]} missing (install as root); their editor tests will skip" >&2
  fi
fi

VENV="${TORCHLINT_TEST_VENV:-.venv-test}"
python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip
# torch==2.13.0 is the CPU build the probe tests run against (it lies on the machine's disk).
"$VENV/bin/python" -m pip install -q "torch==2.13.0" ".[test]"
export PATH="$PWD/$VENV/bin:$PATH"
echo "== python tests ($((SECONDS - START)) s)"
"$VENV/bin/python" -m pytest "$@"
echo "== extension tests ($((SECONDS - START)) s)"
extension/scripts/test.sh
echo "== all tests passed ($((SECONDS - START)) s)"
