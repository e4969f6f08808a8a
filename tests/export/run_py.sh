#!/bin/sh
# run_py.sh [--job] BUILD_DIR SCRIPT.py ARGS...: run a Python test in a venv under BUILD_DIR:
# the export venv holds tensorboard, torch-tb-profiler 0.4.3, pandas, perfetto and nvtx; with
# --job, the job venv holds dask[distributed] and duckdb (scripts/job_dask.py, the SQL tables).
# Each is created once, under a lock; again when its package list changes.
# Exits 77 (skip) with a message only when pip cannot reach its package index.
set=export
pkgs="tensorboard torch-tb-profiler==0.4.3 pandas perfetto nvtx"
if [ "$1" = "--job" ]; then
    set=job
    pkgs="dask[distributed] duckdb"
    shift
fi
build=$1
shift
venv="$build/$set-pyenv"
log="$build/$set-pyenv.log"
mkdir -p "$build" || exit 2
exec 9>"$build/$set-pyenv.lock"
flock 9 || exit 2
if [ "$(cat "$venv/.complete" 2>/dev/null)" != "$pkgs" ]; then
    rm -rf "$venv"
    if ! python3 -m venv "$venv" >"$log" 2>&1; then
        echo "run_py: cannot create a venv (python3 -m venv): see $log" >&2
        cat "$log" >&2
        exit 1
    fi
    set -f # "dask[distributed]" is no glob
    # shellcheck disable=SC2086
    if ! "$venv/bin/pip" install --disable-pip-version-check -q $pkgs >>"$log" 2>&1; then
        if sh "$(dirname "$0")/../../scripts/pip_offline.sh" "$log"; then
            echo "SKIP: pip cannot reach its package index to install $pkgs (see $log)" >&2
            rm -rf "$venv"
            exit 77
        fi
        echo "run_py: pip install $pkgs failed:" >&2
        tail -20 "$log" >&2
        exit 1
    fi
    echo "$pkgs" >"$venv/.complete"
fi
exec 9>&-
exec "$venv/bin/python" "$@"
