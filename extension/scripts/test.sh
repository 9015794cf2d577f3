#!/usr/bin/env bash
# Everything the VS Code extension needs, from a fresh Debian machine (as root) to
# green: system packages, npm ci, type check, unit tests (vitest), the .vsix
# (`vsce package`, whose vscode:prepublish bundles the Python server and builds),
# and the end-to-end tests in real VS Code (code-server + headless Chromium).
# `python3` on PATH must have torchlint[server] installed: the unit tests ask it
# for the server's commands, and the end-to-end suite starts on it before
# switching to the bundle.
set -euo pipefail
cd "$(dirname "$0")/.."
START=$SECONDS
step() { echo "== extension: $* ($((SECONDS - START)) s)"; }

step "system packages"
missing=()
for pkg in chromium ripgrep libkrb5-dev build-essential python3; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "extension: missing Debian packages (install them as root): ${missing[*]}" >&2
    exit 1
  fi
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
node_major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
if [ "$node_major" -lt 20 ]; then
  echo "extension: Node.js 20 or newer is needed (found: $(node --version 2>/dev/null || echo none))" >&2
  exit 1
fi
python3 -c 'import torchlint.lsp' 2>/dev/null || {
  echo "extension: python3 ($(command -v python3)) has no torchlint[server]; run from scripts/test.sh or activate its venv" >&2
  exit 1
}

step "npm ci"
npm ci --no-audit --no-fund --loglevel=error

step "type check and unit tests"
npx tsc --noEmit -p .
npx vitest run

step "package the .vsix (vscode:prepublish bundles the Python server and builds)"
PYTHON=python3 TARGET=linux-x64 npx vsce package --target linux-x64 -o dist/torchlint-linux-x64.vsix

step "build the end-to-end suite"
node esbuild.mjs --tests

step "code-server (cached in ${XDG_CACHE_HOME:-$HOME/.cache}/torchlint-e2e)"
bash scripts/install-code-server.sh >/dev/null

step "end-to-end tests in code-server"
status=0
node test/e2e/runSuite.mjs || status=1
step "end-to-end tests in an untrusted workspace"
node test/e2e/runSuite.mjs untrusted || status=1
step "end-to-end tests in a multi-root workspace"
node test/e2e/runSuite.mjs multiroot || status=1
step "UI smoke test of the .vsix"
node test/e2e/runUi.mjs dist/torchlint-linux-x64.vsix || status=1
step "done, exit $status; screenshots and logs in extension/out/e2e/"
exit $status
