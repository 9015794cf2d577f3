#!/usr/bin/env bash
# Install code-server (VS Code's server build, from the npm registry) for the
# end-to-end tests, without any download outside the npm and Debian registries.
# The install is cached outside the repository, keyed by version; prints the
# path of the code-server entry script on stdout.
set -euo pipefail
VERSION="${CODE_SERVER_VERSION:-4.100.3}"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/torchlint-e2e"
DEST="$CACHE/code-server-$VERSION"
ENTRY="$DEST/node_modules/code-server/out/node/entry.js"
if [ -f "$DEST/.complete" ] && [ -f "$ENTRY" ]; then
  echo "$ENTRY"
  exit 0
fi
log() { echo "install-code-server: $*" >&2; }
RG="$(command -v rg || true)"
if [ -z "$RG" ]; then
  log "ripgrep is missing (apt-get install ripgrep)"; exit 1
fi
# Native modules are built from source: VS Code's `kerberos` needs the Kerberos headers, all need a toolchain.
for tool in krb5-config:libkrb5-dev cc:build-essential c++:build-essential make:build-essential python3:python3; do
  if ! command -v "${tool%%:*}" >/dev/null; then
    log "${tool%%:*} is missing (apt-get install ${tool#*:}): code-server's native modules are built from source"
    exit 1
  fi
done
mkdir -p "$CACHE"
WORK="$(mktemp -d "$CACHE/.install-$VERSION.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
export npm_config_yes=true npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false
cd "$WORK"
echo '{"name":"torchlint-e2e-code-server","private":true}' > package.json
log "npm install code-server@$VERSION (scripts off)"
npm install --no-save --ignore-scripts --loglevel=error "code-server@$VERSION" >&2
# argon2 (password hashing) has no prebuilt binary we can download: build it.
npm rebuild argon2 --loglevel=error >&2
CS="$WORK/node_modules/code-server"
VS="$CS/lib/vscode"
log "installing VS Code's own dependencies"
(cd "$VS" && npm install --omit=dev --ignore-scripts --loglevel=error >&2)
# @vscode/ripgrep's postinstall downloads a binary: use Debian's instead.
mkdir -p "$VS/node_modules/@vscode/ripgrep/bin"
ln -sf "$RG" "$VS/node_modules/@vscode/ripgrep/bin/rg"
log "building native modules"
(cd "$VS" && npm rebuild --loglevel=error >&2)
# What code-server's postinstall.sh would do.
ln -sfn node_modules "$VS/node_modules.asar"
mkdir -p "$VS/bin/remote-cli" "$VS/bin/helpers"
ln -sfn code-linux.sh "$VS/bin/remote-cli/code-server"
ln -sfn browser-linux.sh "$VS/bin/helpers/browser.sh"
if [ -f "$VS/extensions/package.json" ]; then
  log "installing the built-in extensions' dependencies"
  (cd "$VS/extensions" && npm install --omit=dev --ignore-scripts --loglevel=error >&2)
fi
touch "$WORK/.complete"
rm -rf "$DEST"
mv "$WORK" "$DEST"
trap - EXIT
echo "$DEST/node_modules/code-server/out/node/entry.js"
