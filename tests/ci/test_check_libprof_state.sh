#!/bin/sh
# check_libprof_state.sh catches a file reaching libprof's state other than through its own
# accessor: each case plants one object in a copy of gp_prof's objects (session.c's object named
# from another file, one module's accessor called from another, state of its own in a module,
# session.c exporting its data) and expects the check to fail naming it; the untouched copy
# passes. Usage: test_check_libprof_state.sh CC OBJECT_DIR
cc=${1:?usage: test_check_libprof_state.sh CC OBJECT_DIR}
objs=${2:?usage: test_check_libprof_state.sh CC OBJECT_DIR}
ci=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
fails=0

fresh() { rm -rf "$tmp/o" && mkdir "$tmp/o" && cp "$objs"/*.o "$tmp/o/"; }
# plant OBJECT SOURCE: compile SOURCE in place of (or beside) OBJECT in the copy
plant() {
    printf '%s\n' "$2" >"$tmp/p.c" && "$cc" -c -fPIC "$tmp/p.c" -o "$tmp/o/$1" || exit 2
}
# expect WANT(0 pass, 1 fail) PATTERN NAME: run the check on the copy
. "$ci/expect_check.sh"
expect() { expect_run "$1" "$2" "$3" sh "$ci/check_libprof_state.sh" "$tmp/o"; }

fresh && expect 0 '' "the objects as they are"
fresh && plant thread.c.o 'extern char state[]; char *peek(void) { return state; }' &&
    expect 1 "thread.c names session.c's state directly: state" "a module names the session object"
fresh && plant cupti_convert.c.o 'void *prof_state_writer(void); void *w(void) { return prof_state_writer(); }' &&
    expect 1 "cupti_convert.c reaches another module's state: prof_state_writer" \
        "a module calls another module's accessor"
fresh && plant names.c.o 'static int hits; int hit(void) { return ++hits; }' &&
    expect 1 "names.c keeps process-global state outside session.c: hits" "a module keeps state of its own"
fresh && plant session.c.o 'int prof_g[4]; int *core(void) { return prof_g; }' &&
    expect 1 "session.c exports process-global data another file could name: prof_g" \
        "session.c exports its state"
fresh && plant writer.c.o 'void *prof_state_writer(void); void *prof_state_session(void);
void *both(void) { return prof_state_session() ? prof_state_writer() : 0; }' &&
    expect 0 '' "a module calls its own accessor and the core's (allowed)"

[ $fails -eq 0 ] && echo "check_libprof_state: every planted violation caught"
exit $((fails > 0))
