#!/bin/sh
# pip_install.sh SRC BUILD TRACE: the Python package as a user gets it. `pip install SRC` into a
# fresh venv (BUILD/pip-venv) must give a `gprof-train` command that runs (--version, report
# TRACE, run's PyTorch hook found inside the package) and an importable gprof_train whose
# report() is the command's JSON; `make wheel` must give a py3 wheel whose ELF files find their
# libraries through $ORIGIN only and in which no path of this build (checkout, build folder,
# pip's build environment) appears. Both builds share BUILD/pip-build (and ccache), so only
# the first compiles; the time each step took is printed.
# Exits 77 (skip) when pip cannot reach its package index (the build backend comes from it).
src=$(cd "$1" && pwd -P) || exit 2
build=$(mkdir -p "$2" && cd "$2" && pwd -P) || exit 2
trace=$(cd "$(dirname "$3")" && pwd -P)/$(basename "$3")
venv="$build/pip-venv"
log="$build/pip-install.log"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
step() { now=$(date +%s); echo "$1: $((now - t0)) s"; t0=$now; }

# build-dir: one CMake build for every run of this test; ccache when there is one.
cfg="-C build-dir=$build/pip-build"
command -v ccache >/dev/null && cfg="$cfg -C cmake.define.CMAKE_C_COMPILER_LAUNCHER=ccache"

t0=$(date +%s)
rm -rf "$venv" "$build/pip-dist"
python3 -m venv "$venv" >"$log" 2>&1 || { echo "cannot create a venv:"; cat "$log"; exit 1; }
# shellcheck disable=SC2086
if ! "$venv/bin/pip" install --disable-pip-version-check $cfg "$src" >>"$log" 2>&1; then
    if sh "$src/scripts/pip_offline.sh" "$log"; then
        echo "SKIP: pip cannot reach its package index for the build backend (see $log)"
        exit 77
    fi
    echo "FAIL: pip install $src:"; tail -40 "$log"; exit 1
fi
step "pip install (venv, build, install)"

# the command, from outside the checkout
cd "$build" || exit 2
version=$(sed -n 's/^project(gprof_train VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
"$venv/bin/gprof-train" --version | grep -q "^gprof-train $version " ||
    fail "gprof-train --version does not say $version: $("$venv/bin/gprof-train" --version 2>&1)"
if ! "$venv/bin/gprof-train" report "$trace" --row-limit 5 >"$build/pip-report.txt" 2>&1 ||
    ! grep -q '^steps: ' "$build/pip-report.txt"; then
    fail "gprof-train report $trace:"; cat "$build/pip-report.txt"
fi
pkg=$("$venv/bin/python" -c 'import gprof_train, os; print(os.path.dirname(gprof_train.__file__))')
case "$pkg" in "$venv"/*) ;; *) fail "gprof_train imported from '$pkg', not the venv" ;; esac
# the module's report() is the installed command's JSON
"$venv/bin/python" - "$trace" <<'PY' || fail "gprof_train.report differs from the command's JSON"
import json, os, subprocess, sys
import gprof_train
cmd = os.path.join(os.path.dirname(sys.executable), "gprof-train")
want = json.loads(subprocess.run([cmd, "report", sys.argv[1], "--format", "json"],
                                 stdout=subprocess.PIPE, check=True).stdout)
got = gprof_train.report(sys.argv[1])
sys.exit(0 if got == want and got["traces"][0]["summary"]["steps"] > 0 else 1)
PY
# run's PyTorch mode starts the hook shipped in the package (this python has no torch: the
# hook only says it cannot profile, and the script's own sitecustomize is the package's)
PATH="$venv/bin:$PATH" gprof-train run --torch -o "$build/pip-runs" -- python3 -c \
    'import sitecustomize; print("hook:", sitecustomize.__file__)' >"$build/pip-run.txt" 2>&1
grep -q "^hook: $pkg/lib/gprof_train_hook/sitecustomize.py" "$build/pip-run.txt" ||
    { fail "run --torch does not start the package's hook:"; cat "$build/pip-run.txt"; }
step "command and module checks"

# make wheel, into the build folder
if ! make -s -C "$src" wheel PYTHON="$venv/bin/python" WHEEL_DIR="$build/pip-dist" \
    WHEEL_FLAGS="$cfg" >>"$log" 2>&1; then
    echo "FAIL: make wheel:"; tail -40 "$log"; exit 1
fi
step "make wheel"
whl=$(ls "$build/pip-dist/gprof_train-$version-py3-none-"*.whl 2>/dev/null)
[ -f "$whl" ] || { fail "no py3 wheel in $build/pip-dist: $(ls "$build/pip-dist")"; exit 1; }
un="$build/pip-dist/unpacked"
"$venv/bin/python" -m zipfile -e "$whl" "$un" || exit 1
for f in gprof_train/bin/gprof-train gprof_train/lib/libgp_prof.so \
    gprof_train/lib/gprof_train_hook/sitecustomize.py gprof_train/__init__.py; do
    [ -f "$un/$f" ] || fail "the wheel has no $f"
done
elfs=$(find "$un" -type f -exec sh -c 'head -c 4 "$1" | grep -q ELF' sh {} \; -print)
for f in $elfs; do
    for p in $(readelf -d "$f" | sed -n 's/.*R\(UN\)\{0,1\}PATH.*\[\(.*\)\]/\2/p' | tr ':' ' '); do
        # shellcheck disable=SC2016 # $ORIGIN is the loader's, not the shell's
        case "$p" in '$ORIGIN'*) ;; *) fail "${f#"$un"/}: RUNPATH entry '$p' is not under \$ORIGIN" ;; esac
    done
done
[ -n "$elfs" ] || fail "no ELF file in the wheel"
for p in "$src" "$build" pip-build-env; do
    grep -rlF "$p" "$un" | sed "s#^#FAIL: '$p' appears in #"
    grep -rqF "$p" "$un" && fails=$((fails + 1))
done
step "wheel checks"
[ "$fails" -eq 0 ] || { echo "$fails failures"; exit 1; }
echo "pip install and make wheel: OK"
