#!/bin/sh
# libprof's process-global state is one object, the session, that only session.c names (style
# guide 3.1); a module reaches its own member through its accessor prof_state_<module>() and the
# shared core through prof_state_session(). Checked on gp_prof's object files:
#  - no object but session.c.o has anything in .bss or .data (constant tables go to
#    .rodata/.data.rel.ro, the thread-local `self` to .tbss);
#  - session.c.o's data is local to it (no global data symbol another file could name);
#  - no object refers to a data symbol of session.c.o;
#  - each object calls no accessor but prof_state_session and its own module's (the table below).
# NVTX3's own header-defined globals (nvtx*, InitializeInjection*) are exempt: they come from
# NVIDIA's header, not from us.
dir=${1:?usage: check_libprof_state.sh OBJECT_DIR}
[ -e "$dir/session.c.o" ] || { echo "error: no session.c.o in $dir"; exit 2; }
nvtx='^(nvtx|InitializeInjectionNvtx)'

# own_accessor OBJECT: the accessor of the module the object is, or nothing
own_accessor() {
    case $1 in
    clock.c.o) echo prof_state_clock ;;
    config.c.o) echo prof_state_config ;;
    names.c.o) echo prof_state_names ;;
    thread.c.o) echo prof_state_threads ;;
    writer.c.o) echo prof_state_writer ;;
    cupti_activity.c.o) echo prof_state_cupti ;;
    cupti_loader.c.o) echo prof_state_loader ;;
    esac
}
# data symbols (.bss/.data) of an object: "l NAME" or "g NAME" a line
data_syms() {
    objdump -t "$1" | awk '$NF !~ /^(nvtx|InitializeInjectionNvtx)/ {
        for (i = 2; i < NF; i++) if ($i == "O") break
        if (i == NF) next
        sec = $(i + 1)
        if (sec ~ /^\.(bss|data)(\.|$)/ && sec !~ /rel\.ro/) print ($2 == "g" ? "g" : "l"), $NF }'
}
undefined() { objdump -t "$1" | awk '$2 == "*UND*" || $3 == "*UND*" { print $NF }' | sort -u; }

session_data=$(data_syms "$dir/session.c.o")
exported=$(printf '%s\n' "$session_data" | awk '$1 == "g" { print $2 }')
status=0
if [ -n "$exported" ]; then
    echo "error: session.c exports process-global data another file could name:" $exported
    status=1
fi
n=0
for o in "$dir"/*.o; do
    n=$((n + 1))
    base=$(basename "$o")
    [ "$base" = session.c.o ] && continue
    file=$(basename "$o" .o)
    found=$(data_syms "$o" | awk '{ print $2 }')
    if [ -n "$found" ]; then
        echo "error: $file keeps process-global state outside session.c:" $found
        status=1
    fi
    und=$(undefined "$o")
    named=$(printf '%s\n' "$session_data" | awk '{ print $2 }' | grep -Fx -e "$und" 2>/dev/null |
        grep -vE "$nvtx")
    if [ -n "$und" ] && [ -n "$named" ]; then
        echo "error: $file names session.c's state directly:" $named
        status=1
    fi
    own=$(own_accessor "$base")
    for a in $(printf '%s\n' "$und" | grep '^prof_state_'); do
        [ "$a" = prof_state_session ] || [ "$a" = "$own" ] && continue
        echo "error: $file reaches another module's state: $a"
        status=1
    done
done
[ $status -eq 0 ] && echo "libprof state ok: $n objects, one session object in session.c"
exit $status
