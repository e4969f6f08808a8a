#!/bin/sh
# check_layers.sh and check_layer_symbols.sh catch a back-edge: each case plants one in a copy of
# analyze/ (an include of a higher or sibling layer, a folder or public header with no layer; a
# call from a lower layer's object into a higher one) and expects the check to fail naming it,
# and the untouched copy and an allowed edge to pass. Usage: test_check_layers.sh SOURCE_ROOT
root=${1:?usage: test_check_layers.sh SOURCE_ROOT}
ci=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
fails=0

fresh() {
    rm -rf "$tmp/analyze" && mkdir -p "$tmp/analyze" &&
        cp -R "$root/analyze/src" "$root/analyze/include" "$tmp/analyze/"
}
. "$ci/expect_check.sh"
# expect WANT(0 pass, 1 fail) PATTERN NAME: run the include check on the copy
expect() { expect_run "$1" "$2" "$3" sh "$ci/check_layers.sh" "$tmp/analyze"; }
plant() { # FILE LINE: add an include line at the top of a copied file
    printf '%s\n' "$2" | cat - "$tmp/analyze/$1" >"$tmp/x" && mv "$tmp/x" "$tmp/analyze/$1"
}

fresh && expect 0 '' "the tree as it is"
fresh && plant src/reader/trace.c '#include "job/job_int.h"' &&
    expect 1 'reader/trace.c:1: reader/ includes "job/job_int.h" of job/, a higher layer' \
        "reader includes job's private header"
fresh && plant src/model/key_avg.c '#include "gp/rules.h"' &&
    expect 1 'model/key_avg.c:1: model/ includes "gp/rules.h" of rules/, a higher layer' \
        "model includes the rules' public header"
fresh && plant src/compare/compare.c '#include "job/job_int.h"' &&
    expect 1 'compare/ includes "job/job_int.h" of job/, a sibling layer' "compare includes job"
fresh && plant include/gp/trace.h '#include "gp/analysis.h"' &&
    expect 1 'gp/trace.h:1: reader/ includes "gp/analysis.h" of model/' "public trace.h includes analysis.h"
fresh && mkdir "$tmp/analyze/src/util" && : >"$tmp/analyze/src/util/util.c" &&
    expect 1 'src/util/ is no layer' "a folder with no layer"
fresh && : >"$tmp/analyze/include/gp/extra.h" && expect 1 'gp/extra.h has no layer' "a public header with no layer"
fresh && plant src/job/job.c '#include "reader/trace_int.h"' && expect 0 '' "job includes the reader (allowed)"

# the library's symbols: a reader object calling a job function
if command -v cc >/dev/null && command -v ar >/dev/null; then
    s="$tmp/sym/src"
    mkdir -p "$s/reader" "$s/job" "$s/model"
    printf 'int job_f(void);\nint reader_f(void) { return job_f(); }\n' >"$s/reader/r.c"
    printf 'int reader_f(void);\nint job_f(void) { return 1; }\nint job_g(void) { return reader_f(); }\n' >"$s/job/j.c"
    printf 'int reader_f(void);\nint model_f(void) { return reader_f(); }\n' >"$s/model/m.c"
    for c in "$s"/*/*.c; do cc -c "$c" -o "$tmp/sym/$(basename "$c").o" || exit 2; done
    ar rc "$tmp/sym/lib.a" "$tmp/sym"/*.o
    out=$(sh "$ci/check_layer_symbols.sh" "$s" "$tmp/sym/lib.a" 2>&1)
    if [ $? -ne 0 ] && [ "$(printf '%s\n' "$out" | grep -c error)" -eq 1 ] &&
        printf '%s\n' "$out" | grep -q 'reader/r.c.o uses job_f of job/j.c.o'; then
        echo "ok   symbols: reader calls job"
    else
        echo "FAIL symbols: want one error for reader/r.c.o -> job_f, got: $out"
        fails=$((fails + 1))
    fi
    rm "$s/reader/r.c" && printf 'int reader_f(void) { return 0; }\n' >"$s/reader/r.c" &&
        cc -c "$s/reader/r.c" -o "$tmp/sym/r.c.o" && rm "$tmp/sym/lib.a" && ar rc "$tmp/sym/lib.a" "$tmp/sym"/*.o
    if out=$(sh "$ci/check_layer_symbols.sh" "$s" "$tmp/sym/lib.a" 2>&1); then
        echo "ok   symbols: one way"
    else
        echo "FAIL symbols: one-way library failed: $out"
        fails=$((fails + 1))
    fi
fi
[ $fails -eq 0 ] && echo "check_layers: all planted back-edges caught"
exit $((fails > 0))
