#!/bin/sh
# `make bench` entry for GT19 and GT01 under CPU load: bench/accuracy_contention.sh on this build.
# usage: bench_contention.sh BUILD_DIR
here=$(cd "$(dirname "$0")" && pwd)
exec sh "$here/accuracy_contention.sh" "${1:-build-release}"
