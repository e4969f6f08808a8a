#!/bin/sh
# Install the Debian packages gprof-train needs to build, test and run, skipping those present.
# Uses sudo only when not root. Set GP_DEPS_EXTRA to add packages.
set -e
pkgs="cmake make gcc g++ clang libclang-rt-14-dev pkg-config python3 zlib1g-dev libopenblas-dev
libpng-dev dataset-fashion-mnist clang-format chromium python3-venv $GP_DEPS_EXTRA"
missing=""
for p in $pkgs; do
    if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        continue
    fi
    missing="$missing $p"
done
if [ -z "$missing" ]; then
    echo "deps: all present ($(echo $pkgs | wc -w) packages)"
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "deps: missing:$missing (no apt-get here: install them with your package manager)" >&2
    exit 1
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# shellcheck disable=SC2086
$sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
echo "deps: installed:$missing"
