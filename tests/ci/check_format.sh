#!/bin/sh
# Every C/CUDA source in the tree is formatted by .clang-format (style guide 3.9).
# Exits 77 (skipped) when clang-format is not installed; `make format` fixes what it reports.
root=${1:-.}
cd "$root" || exit 2
command -v clang-format >/dev/null 2>&1 || { echo "clang-format not installed"; exit 77; }
files=$(git ls-files '*.c' '*.h' '*.cu' '*.cuh' 2>/dev/null)
[ -n "$files" ] || files=$(find common libprof trainer analyze viewer-export cli tests bench \
    -name '*.[ch]' -o -name '*.cu' -o -name '*.cuh')
bad=0
for f in $files; do
    if clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then
        continue
    fi
    echo "not formatted: $f"
    bad=1
done
[ $bad -eq 0 ] && echo "format ok"
exit $bad
