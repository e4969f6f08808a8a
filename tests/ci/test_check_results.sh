#!/bin/sh
# check_results.sh catches a planted violation: each case plants one in a copy of analyze/src (a
# bare `return -1`, spaced or in parentheses; a LEX_ status name; an ANALYSIS_ one) and expects
# the check to fail naming its file and line, and the untouched copy and a named sentinel to pass.
# Usage: test_check_results.sh SOURCE_ROOT
root=${1:?usage: test_check_results.sh SOURCE_ROOT}
ci=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
fails=0

fresh() { rm -rf "$tmp/src" && cp -R "$root/analyze/src" "$tmp/src"; }
. "$ci/expect_check.sh"
# expect WANT(0 pass, 1 fail) PATTERN NAME: run the check on the copy
expect() { expect_run "$1" "$2" "$3" sh "$ci/check_results.sh" "$tmp/src"; }
plant() { # FILE TEXT: append a line to a copied file
    printf '%s\n' "$2" >>"$tmp/src/$1"
}
line_of_end() { wc -l <"$tmp/src/$1" | tr -d ' '; }

fresh && expect 0 '' "the tree as it is"
fresh && plant reader/trace.c 'static int f(void) { return -1; }' &&
    expect 1 "reader/trace.c:$(line_of_end reader/trace.c):.*return -1" "a bare return -1"
fresh && plant model/key_avg.c 'static int g(void) { return ( -1 ) ; }' &&
    expect 1 "model/key_avg.c:$(line_of_end model/key_avg.c):" "return -1 spaced, in parentheses"
fresh && plant reader/json_lex.h '#define X LEX_OK' &&
    expect 1 "reader/json_lex.h:$(line_of_end reader/json_lex.h):.*LEX_OK" "a LEX_ status name"
fresh && plant job/job.c 'int h(void) { return ANALYSIS_NOMEM; }' &&
    expect 1 "job/job.c:$(line_of_end job/job.c):.*ANALYSIS_NOMEM" "an ANALYSIS_ status name"
fresh && plant job/job.c '#define NO_RANK (-1)' && plant job/job.c 'int k(void) { return NO_RANK; }' &&
    expect 0 '' "a named sentinel (allowed)"
[ $fails -eq 0 ] && echo "check_results: all planted violations caught"
exit $((fails > 0))
