#!/usr/bin/env bash
# Bundle torchlint (built from this repository) and its dependencies into
# bundled/libs/cpXY, one folder per supported CPython, for one VS Code target.
# libcst and PyYAML are compiled, so each target needs its own .vsix.
# `vsce package` runs it (vscode:prepublish), so TARGET defaults to this machine.
#   TARGET=linux-x64 | linux-arm64 | darwin-x64 | darwin-arm64 | win32-x64
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
host_target() {
  local os arch
  case "$(uname -s)" in
    Linux) os=linux ;;
    Darwin) os=darwin ;;
    MINGW* | MSYS* | CYGWIN*) os=win32 ;;
    *) os="$(uname -s)" ;;
  esac
  case "$(uname -m)" in
    x86_64 | amd64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) arch="$(uname -m)" ;;
  esac
  echo "$os-$arch"
}
TARGET="${TARGET:-$(host_target)}"
VERSIONS="${TORCHLINT_BUNDLE_PYTHONS:-3.10 3.11 3.12 3.13 3.14}"
case "$TARGET" in
  linux-x64) PLATFORMS="manylinux_2_28_x86_64 manylinux_2_17_x86_64 manylinux2014_x86_64" ;;
  linux-arm64) PLATFORMS="manylinux_2_28_aarch64 manylinux_2_17_aarch64 manylinux2014_aarch64" ;;
  darwin-x64) PLATFORMS="macosx_10_13_x86_64 macosx_10_12_x86_64 macosx_10_9_x86_64" ;;
  darwin-arm64) PLATFORMS="macosx_11_0_arm64" ;;
  win32-x64) PLATFORMS="win_amd64" ;;
  *) echo "bundle-python: unknown TARGET $TARGET" >&2; exit 2 ;;
esac
platform_args=()
for p in $PLATFORMS; do platform_args+=(--platform "$p"); done

WHEELS="$(mktemp -d)"
trap 'rm -rf "$WHEELS"' EXIT
"$PYTHON" -m pip wheel -q --no-deps -w "$WHEELS" ..
WHEEL="$(ls "$WHEELS"/torchlint-*.whl)"
# The wheel itself ships too: the extension offers to pip-install it where no bundled copy runs.
rm -rf bundled/libs bundled/wheel
mkdir -p bundled/wheel
cp "$WHEEL" bundled/wheel/
for v in $VERSIONS; do
  dest="bundled/libs/cp${v/./}"
  "$PYTHON" -m pip install -q --disable-pip-version-check --no-compile --only-binary=:all: \
    --implementation cp --python-version "$v" "${platform_args[@]}" \
    --target "$dest" "torchlint[server] @ file://$WHEEL"
  # Console scripts and caches are of no use inside the extension.
  rm -rf "$dest/bin"
  find "$dest" \( -name __pycache__ -o -path "*/libcst/*tests" \) -type d -prune -exec rm -rf {} +
done
echo "bundle-python: $TARGET, CPython $VERSIONS -> bundled/libs ($(du -sh bundled/libs | cut -f1))"
