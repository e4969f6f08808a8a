#!/usr/bin/env python3
"""test_run_capture.py: what the CLI makes of a profiled program that dies or loses records
(issue 12 §3-5), with tests/prof/prof_app.c as the program.
  die       a program killed (SIGKILL, segfault, abort, _exit) leaves <trace>.tmp: report,
            diagnose and export read it, named directly and in its folder, say "incomplete: the
            program ended at ..." and exit 0 (gzip and plain files)
  twin      a folder holding X and X.tmp reads X only; a lone .tmp beside another trace is read
  messages  run says how the program ended (signal, exit code), where its trace is and how many
            events it holds, a trace lost to an I/O error, and "no NVTX or CUDA call" only when
            nothing was written
  dropped   --buffer-limit reaches the program (GP_PROF_BUFFER_LIMIT) and is validated; dropped
            records are said by run, report and diagnose (GT00 crit)
  signals   SIGHUP and SIGQUIT sent to run reach the program, which finishes its trace
  folders   runs started in the same second get folders of their own
usage: test_run_capture.py CASE GPROF_TRAIN PROF_APP"""
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time

FAILS = []
# Under ASan/UBSan a segfault is the sanitizer's report and exit code, not a death by SIGSEGV.
SANITIZED = bool(os.environ.get("GP_SANITIZE"))


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL:", what)


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)


def die(app, folder, how, ms=1500, out="-"):
    """Run prof_app die, writing into `folder`; @return the .tmp it left (or None)."""
    env = dict(os.environ, GP_PROF_OUT=folder)
    r = run([app, "die", out, how, str(ms)], env=env)
    want = {"kill": -signal.SIGKILL, "segv": -signal.SIGSEGV, "abort": -signal.SIGABRT, "exit": 3}[how]
    check(r.returncode == want or (SANITIZED and how == "segv" and r.returncode != 0),
          "%s: prof_app exit %d (want %d)" % (how, r.returncode, want))
    tmps = [f for f in os.listdir(folder) if f.endswith(".tmp")]
    done = [f for f in os.listdir(folder) if f.endswith(".json") or f.endswith(".gz")]
    check(len(tmps) == 1 and not done, "%s: a .tmp and no finished trace: %s" % (how, os.listdir(folder)))
    return os.path.join(folder, tmps[0]) if tmps else None


INCOMPLETE = re.compile(r"incomplete: the program ended at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} UTC, "
                        r"[0-9.]+ s into the trace \((\d+) events kept\)")


def check_reads(gprof, target, tmp, what):
    r = run([gprof, "report", target])
    check(r.returncode == 0, "%s: report exits 0 (%d): %s" % (what, r.returncode, r.stderr))
    m = INCOMPLETE.search(r.stderr)
    check(m is not None and int(m.group(1)) > 100, "%s: report warns incomplete: %r" % (what, r.stderr))
    check(("== " + tmp) in r.stdout or ("== " + os.path.basename(tmp)) in r.stdout or tmp in r.stdout,
          "%s: report reads the .tmp: %r" % (what, r.stdout[:300]))
    check("work" in r.stdout, "%s: the ranges are in the table" % what)
    r = run([gprof, "diagnose", target])
    check(r.returncode == 0, "%s: diagnose exits 0 (%d): %s" % (what, r.returncode, r.stderr))
    check(INCOMPLETE.search(r.stderr) is not None, "%s: diagnose warns incomplete: %r" % (what, r.stderr))
    check("the trace was not finished" in r.stdout, "%s: GT00 says so: %r" % (what, r.stdout[:600]))


def case_die(gprof, app, tmp):
    for how in ("kill", "segv", "abort", "exit"):
        folder = os.path.join(tmp, how)
        os.mkdir(folder)
        t = die(app, folder, how)  # gzip: > 1.2 s, so the stream has been made decodable
        if not t:
            continue
        check_reads(gprof, folder, t, how + " (folder)")
        check_reads(gprof, t, t, how + " (.tmp)")
        if how == "kill":
            out = os.path.join(tmp, "k.json.gz")
            r = run([gprof, "export", folder, "--perfetto", out])
            check(r.returncode == 0 and os.path.exists(out), "export of the folder: %s" % r.stderr)
            check(INCOMPLETE.search(r.stderr) is not None, "export warns incomplete: %r" % r.stderr)
    folder = os.path.join(tmp, "plain")
    os.mkdir(folder)
    t = die(app, folder, "kill", 600, os.path.join(folder, "p.pt.trace.json"))
    if t:
        check(t.endswith("p.pt.trace.json.tmp"), "plain .tmp name %s" % t)
        check_reads(gprof, folder, t, "plain kill (folder)")


def case_twin(gprof, app, tmp):
    folder = os.path.join(tmp, "twin")
    os.mkdir(folder)
    done = os.path.join(folder, "a.pt.trace.json.gz")
    r = run([app, "threads", done])
    check(r.returncode == 0 and os.path.exists(done), "a finished trace: %s" % r.stderr)
    os.mkdir(os.path.join(tmp, "d"))
    dead = die(app, os.path.join(tmp, "d"), "kill", 1300)
    if not dead:
        return
    with open(dead, "rb") as f:
        data = f.read()
    with open(done + ".tmp", "wb") as f:  # X and X.tmp: X only
        f.write(data)
    r = run([gprof, "report", folder])
    check(r.returncode == 0, "twin: report exits 0: %s" % r.stderr)
    check(r.stdout.count("\n== ") + r.stdout.startswith("== ") == 1 and ".tmp" not in r.stdout,
          "twin: one section, the finished trace: %r" % re.findall(r"^== .*$", r.stdout, re.M))
    check("incomplete" not in r.stderr, "twin: no incomplete warning: %r" % r.stderr)
    os.rename(done + ".tmp", os.path.join(folder, "b.pt.trace.json.gz.tmp"))  # a lone .tmp
    r = run([gprof, "report", folder])
    secs = re.findall(r"^== .*$", r.stdout, re.M)
    check(r.returncode == 0 and len(secs) == 2 and secs[1].endswith("b.pt.trace.json.gz.tmp"),
          "lone .tmp beside a trace: both read: %r" % secs)


def run_cli(gprof, out, *cmd, extra=()):
    return run([gprof, "run", *extra, "-o", out, "--", *cmd])


def case_messages(gprof, app, tmp):
    out = os.path.join(tmp, "runs")
    r = run_cli(gprof, out, app, "die", "-", "kill", "1500")
    check(r.returncode == 128 + signal.SIGKILL, "kill: run exits 137 (%d)" % r.returncode)
    check("was killed by signal 9 (SIGKILL)" in r.stderr, "kill: says the signal: %r" % r.stderr)
    m = re.search(r"incomplete trace '([^']+\.pt\.trace\.json\.gz\.tmp)': (\d+) events", r.stderr)
    check(m is not None and int(m.group(2)) > 100 and os.path.exists(m.group(1)),
          "kill: where the trace is, how many events: %r" % r.stderr)
    check("no NVTX or CUDA call" not in r.stderr, "kill: never 'no call' with a .tmp: %r" % r.stderr)
    check("work" in r.stdout and "GT00" in r.stdout, "kill: the report of the .tmp is printed")
    check(INCOMPLETE.search(r.stderr) is not None, "kill: incomplete said at the end: %r" % r.stderr)
    r = run_cli(gprof, out, app, "die", "-", "exit", "300", extra=("--no-report",))
    check(r.returncode == 3 and "exited with code 3" in r.stderr, "_exit(3): %d %r" % (r.returncode, r.stderr))
    check(re.search(r"incomplete trace '[^']+\.tmp': \d+ events", r.stderr) is not None, "_exit: .tmp said")
    if not SANITIZED:
        r = run_cli(gprof, out, app, "die", "-", "segv", "300", extra=("--no-report",))
        check(r.returncode == 128 + signal.SIGSEGV and "was killed by signal 11 (SIGSEGV)" in r.stderr,
              "segv: %d %r" % (r.returncode, r.stderr))
    r = run_cli(gprof, out, "sh", "-c", "exit 3")
    check(r.returncode == 3 and "'sh' exited with code 3" in r.stderr, "exit 3: %r" % r.stderr)
    check("no trace was written" in r.stderr and "made no NVTX or CUDA call" in r.stderr,
          "nothing recorded: %r" % r.stderr)
    r = run_cli(gprof, out, "sh", "-c", "kill -TERM $$")
    check(r.returncode == 128 + signal.SIGTERM and "killed by signal 15 (SIGTERM)" in r.stderr,
          "sh killed: %r" % r.stderr)
    r = run_cli(gprof, out, app, "fsize", "-")  # RLIMIT_FSIZE: the trace cannot be written
    check(r.returncode == 0 and "exited with code 0" in r.stderr, "fsize: exit 0: %r" % r.stderr)
    check("could not write it" in r.stderr and "I/O error" in r.stderr, "fsize: the write failure said: %r" % r.stderr)
    check("no NVTX or CUDA call" not in r.stderr, "fsize: never 'no call': %r" % r.stderr)


def case_dropped(gprof, app, tmp):
    out = os.path.join(tmp, "runs")
    r = run([gprof, "run", "--buffer-limit", "12X", "-o", out, "--", "true"])
    check(r.returncode == 2 and "invalid value '12X' for --buffer-limit" in r.stderr, "bad size: %r" % r.stderr)
    r = run([gprof, "run", "--buffer-limit", "1K", "-o", out, "--", "true"])
    check(r.returncode == 2 and "at least 64K" in r.stderr, "too small: %r" % r.stderr)
    check(not os.path.exists(out), "nothing run on a bad value")
    r = run([gprof, "run", "--no-report", "--buffer-limit", "512M", "-o", out, "--", "sh", "-c",
             'echo "limit=$GP_PROF_BUFFER_LIMIT"'])
    check(r.returncode == 0 and "limit=512M" in r.stdout, "GP_PROF_BUFFER_LIMIT set: %r" % r.stdout)
    r = run([gprof, "run", "--buffer-limit", "64K", "-o", out, "--", app, "tight", "-", "1000000"])
    m = re.search(r"the profiler dropped (\d+) CPU records \(([0-9.]+)% of the CPU ranges\)", r.stderr)
    check(r.returncode == 0 and m is not None and int(m.group(1)) > 10000,
          "run says the dropped CPU records: %r" % r.stderr)
    check("[crit] GT00" in r.stdout and "CPU records dropped" in r.stdout, "GT00 crit in run's diagnosis")
    trace = re.search(r"trace '([^']+)': \d+ events", r.stderr)
    if not trace:
        check(False, "run names the trace: %r" % r.stderr)
        return
    r = run([gprof, "report", trace.group(1)])
    check(r.returncode == 0 and "the profiler dropped" in r.stderr, "report warns: %r" % r.stderr)
    r = run([gprof, "diagnose", "--fail-on", "crit", trace.group(1)])
    check(r.returncode == 1 and "the profiler dropped" in r.stderr, "diagnose: crit, warns: %r" % r.stderr)


def no_core():
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def case_signals(gprof, app, tmp):
    for sig in (signal.SIGHUP, signal.SIGQUIT):
        out = os.path.join(tmp, "sig%d" % sig)
        # stderr to a file: an orphaned program would hold a pipe open forever
        with open(os.path.join(tmp, "err%d" % sig), "w+") as errf:
            p = subprocess.Popen([gprof, "run", "--no-report", "-o", out, "--", app, "spin", "-"],
                                 stdout=subprocess.PIPE, stderr=errf, text=True, preexec_fn=no_core)
            check(p.stdout.readline().strip() == "ready", "%s: the program started" % sig.name)
            p.stdout.close()
            time.sleep(0.3)
            p.send_signal(sig)
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            errf.seek(0)
            err = errf.read()
        check(p.returncode == 128 + sig, "%s: run exits 128+%d (%s)" % (sig.name, sig, p.returncode))
        check(("killed by signal %d (%s)" % (sig, sig.name)) in err, "%s: said: %r" % (sig.name, err))
        files = [f for d in os.listdir(out) for f in os.listdir(os.path.join(out, d))]
        pids = {int(m.group(1)) for f in files for m in [re.search(r"_(\d+)\.\d+\.pt\.trace", f)] if m}
        for pid in pids:  # an orphan would still be spinning: end it, and fail
            try:
                os.kill(pid, 0)
                os.kill(pid, signal.SIGKILL)
                check(False, "%s: the program was left running (pid %d)" % (sig.name, pid))
            except ProcessLookupError:
                pass
        check(len(files) == 1 and files[0].endswith(".pt.trace.json.gz"),
              "%s: the program finished its trace: %s" % (sig.name, files))


def case_folders(gprof, app, tmp):
    out = os.path.join(tmp, "runs")
    for _ in range(2):
        time.sleep(1.0 - time.time() % 1.0 + 0.01)  # just after a second begins
        ps = [subprocess.Popen([gprof, "run", "--no-report", "-o", out, "--", "true"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(3)]
        for p in ps:
            p.wait(timeout=60)
            check(p.returncode == 0, "run -- true exits 0")
    dirs = sorted(os.listdir(out))
    check(len(dirs) == 6, "six runs, six folders: %s" % dirs)
    check(any(re.search(r"-\d{8}-\d{6}-[23]$", d) for d in dirs), "same second: -2/-3: %s" % dirs)


def main():
    case, gprof, app = sys.argv[1], sys.argv[2], sys.argv[3]
    cases = {"die": case_die, "twin": case_twin, "messages": case_messages,
             "dropped": case_dropped, "signals": case_signals, "folders": case_folders}
    if case not in cases:
        print("unknown case", case)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        cases[case](gprof, app, tmp)
    print("%s: %s" % (case, "FAILED (%d)" % len(FAILS) if FAILS else "ok"))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
