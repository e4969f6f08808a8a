#!/bin/sh
# torch_venv.sh [CMD ARGS...]: make sure the PyTorch venv exists, then run CMD with it first on
# PATH (GP_TORCH_VENV names it). The venv lives outside any clone, so every clone and CI run
# shares one install of torch (about 5 GB with its CUDA wheels): ~/.cache/gprof-train/torch-venv,
# or $GP_TORCH_VENV. Made once, under a lock, by `pip install torch` when torch is missing (an
# existing venv is never removed).
# Exits 77 (skip) with a message only when pip cannot reach its package index.
venv=${GP_TORCH_VENV:-$HOME/.cache/gprof-train/torch-venv}
cache=$(dirname "$venv")
log="$cache/torch-install.log"
mkdir -p "$cache" || exit 2
exec 9>"$venv.lock"
flock 9 || exit 2
if ! "$venv/bin/python" -c 'import torch' 2>/dev/null; then
    echo "torch_venv: installing torch into $venv (once; see $log)" >&2
    if [ ! -x "$venv/bin/python" ] && ! python3 -m venv "$venv" >"$log" 2>&1; then
        echo "torch_venv: cannot create a venv (python3 -m venv): see $log" >&2
        cat "$log" >&2
        exit 1
    fi
    if ! "$venv/bin/pip" install --disable-pip-version-check -q torch >>"$log" 2>&1; then
        if sh "$(dirname "$0")/pip_offline.sh" "$log"; then
            echo "SKIP: pip cannot reach its package index to install torch (see $log)" >&2
            exit 77
        fi
        echo "torch_venv: pip install torch failed:" >&2
        tail -20 "$log" >&2
        exit 1
    fi
fi
exec 9>&-
[ $# -eq 0 ] && { echo "$venv"; exit 0; }
GP_TORCH_VENV=$venv PATH="$venv/bin:$PATH" exec "$@"
