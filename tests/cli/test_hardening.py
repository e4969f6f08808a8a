"""Hostile and careless inputs to gprof-train (issue 26), one case a ctest: each names what a user
did and checks the answer they must get. Runs in the ASan/UBSan build too.
usage: test_hardening.py GPROF_TRAIN WORKDIR CASE"""
import glob
import gzip
import json
import os
import shutil
import subprocess
import sys
import time

BIN, WORK, CASE = sys.argv[1], sys.argv[2], sys.argv[3]
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data")
FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL:", what)


def gp(*args, **kw):
    return subprocess.run([BIN] + list(args), capture_output=True, text=True, **kw)


def fresh(name):
    d = os.path.join(WORK, CASE, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def case_empty_folder():
    """report, diagnose and job on an empty folder: "no trace files", exit 2 (UBSan stopped at
    qsort(NULL, 0, ...) before the message)."""
    empty = fresh("empty")
    for cmd in ("report", "diagnose", "job"):
        p = gp(cmd, empty)
        check(p.returncode == 2, "%s on an empty folder exited %d: %s" % (cmd, p.returncode,
                                                                         p.stderr))
        check("no trace files" in p.stderr, "%s: %r" % (cmd, p.stderr))
        check("runtime error" not in p.stderr, "%s: %r" % (cmd, p.stderr))


def case_export_overwrite():
    """export with an output that is the trace (by name, through a link) or the other output:
    refused before anything is written, the trace unchanged."""
    d = fresh("export")
    trace = os.path.join(d, "t.json")
    shutil.copy(os.path.join(DATA, "traces", "y_nested.json"), trace)
    os.symlink("t.json", os.path.join(d, "link.json"))
    before = open(trace, "rb").read()
    for args in (["--perfetto", trace], ["--html", trace],
                 ["--perfetto", os.path.join(d, "link.json")],
                 ["--perfetto", os.path.join(d, "..", "export", "t.json")]):
        p = gp("export", trace, *args)
        check(p.returncode == 2, "export %s exited %d" % (args, p.returncode))
        check("is the trace being read" in p.stderr, "export %s: %r" % (args, p.stderr))
        check(open(trace, "rb").read() == before, "export %s replaced the trace" % args)
    out = os.path.join(d, "out.html")
    for pre in (False, True):
        if pre:
            open(out, "w").write("x")
        p = gp("export", trace, "--perfetto", out, "--html", os.path.join(d, ".", "out.html"))
        check(p.returncode == 2 and "both name" in p.stderr,
              "--perfetto X --html X (exists: %s): %d %r" % (pre, p.returncode, p.stderr))
    p = gp("export", trace, "--perfetto", os.path.join(d, "a.json"), "--html",
           os.path.join(d, "a.html"))
    check(p.returncode == 0, "two outputs exited %d: %s" % (p.returncode, p.stderr))


def write_gz_members(path, head, body, copies, tail):
    """A gzip file of concatenated members: head, `copies` times the same compressed body, tail
    (a gzip bomb costs nothing to write)."""
    member = gzip.compress(body, 9)
    with open(path, "wb") as f:
        f.write(gzip.compress(head))
        for _ in range(copies):
            f.write(member)
        f.write(gzip.compress(tail))


def case_max_memory_names():
    """60 K events with distinct 2 KB names (120 MB of names, 3 MB of events) under
    --max-memory 50M: refused as past the limit (the names did not count)."""
    d = fresh("names")
    body = b",".join(b'{"ph":"X","name":"op%06d_%s","ts":%d,"dur":1,"pid":1,"tid":1}'
                     % (i, b"n" * 2000, i) for i in range(60000))
    for name, data in (("names.json", b'{"traceEvents":[' + body + b"]}"),):
        path = os.path.join(d, name)
        open(path, "wb").write(data)
        for gz in (False, True):
            if gz:
                write_gz_members(path + ".gz", b'{"traceEvents":[', body, 1, b"]}")
            p = gp("report", path + (".gz" if gz else ""), "--max-memory", "50M")
            check(p.returncode == 2, "names%s under 50M exited %d" % (".gz" * gz, p.returncode))
            check("more memory than the limit of 50 MiB (--max-memory)" in p.stderr,
                  "names: %r" % p.stderr[-400:])
        p = gp("report", path, "--max-memory", "400M")
        check(p.returncode == 0, "names under 400M exited %d: %s" % (p.returncode, p.stderr))


def case_gzip_bomb():
    """A 1 MB gzip of 6 M events stops at the default ceiling (64 times the file, at least
    256 MiB) with a message saying how to raise it."""
    d = fresh("bomb")
    path = os.path.join(d, "bomb.json.gz")
    ev = b'{"ph":"X","name":"k","cat":"kernel","ts":1,"dur":1,"pid":0,"tid":7},'
    write_gz_members(path, b'{"traceEvents":[', ev * 100000, 60,
                     b'{"ph":"X","name":"k","ts":1,"dur":1,"pid":0,"tid":7}]}')
    check(os.path.getsize(path) < 2 << 20, "the bomb is %d bytes" % os.path.getsize(path))
    p = gp("report", path)
    check(p.returncode == 2, "the bomb exited %d" % p.returncode)
    check("decompression bomb" in p.stderr and "--max-memory SIZE" in p.stderr,
          "the bomb: %r" % p.stderr[-400:])


def case_real_traces_fit():
    """Every real trace reads under the default ceiling."""
    shared = os.environ.get("GP_SHARED_TRACES", "")  # ../shared/traces, when present
    paths = glob.glob(os.path.join(DATA, "torch", "*.json.gz"))
    paths += glob.glob(os.path.join(DATA, "traces", "y_*.json"))
    paths += glob.glob(os.path.join(shared, "*.json*"))
    for path in paths:
        p = gp("report", path, "--row-limit", "1")
        check(p.returncode == 0 and "memory" not in p.stderr,
              "%s exited %d: %s" % (path, p.returncode, p.stderr[-300:]))


def case_compare_not_evaluated():
    """compare where a rule could not be evaluated on BASE (GT18 on a trace with no CPU ops to
    count) and fires on NEW: the metric is named, never "(null)", and the JSON unit is the same
    whichever side is BASE."""
    a = os.path.join(DATA, "torch", "mlp_step.json.gz")
    b = os.path.join(DATA, "torch", "tiny_ops_loss.json.gz")
    p = gp("compare", a, b)
    line = [l for l in p.stdout.splitlines() if "GT18" in l]
    check("(null)" not in p.stdout, "compare printed (null):\n" + p.stdout)
    check(len(line) == 1 and "tiny_op_share n/a ->" in line[0], "GT18 line: %s" % line)
    units = []
    for pair in ((a, b), (b, a)):
        p = gp("compare", *pair, "--format", "json")
        found = [f for f in json.loads(p.stdout)["findings"] if f["id"] == "GT18"]
        units += [f["unit"] for f in found]
    check(units == ["%", "%"], "GT18's unit by side: %s" % units)


def case_runs_folder():
    """report, diagnose and export on a folder of run folders (runs/, where `run` writes): the
    newest run is read and named, --all reads every run; a subfolder with no trace is no run."""
    runs = os.path.join(fresh("runs"), "runs")
    for i, (name, src) in enumerate((("b-old", "mlp_step"), ("a-new", "record_shapes"))):
        d = os.path.join(runs, name)
        os.makedirs(d)
        shutil.copy(os.path.join(DATA, "torch", src + ".json.gz"),
                    os.path.join(d, "h_1.pt.trace.json.gz"))
        open(os.path.join(d, "summary.json"), "w").write("{}")
        os.utime(d, (1000000 + i * 1000, 1000000 + i * 1000))
    os.makedirs(os.path.join(runs, "zz-empty"))
    note = "'%s' holds 2 runs: reading the newest, '%s/a-new'" % (runs, runs)
    for args in (["report", runs], ["diagnose", runs],
                 ["export", runs, "--html", os.path.join(runs, "..", "o.html")]):
        p = gp(*args)
        check(p.returncode == 0, "%s exited %d: %s" % (args, p.returncode, p.stderr))
        check(note in p.stderr, "%s: %r" % (args[0], p.stderr))
        check("b-old" not in p.stdout, "%s read the older run:\n%s" % (args[0], p.stdout))
    p = gp("report", runs, "--all")
    heads = [l for l in p.stdout.splitlines() if l.startswith("== ")]
    check(len(heads) == 2 and "a-new" in heads[0] and "b-old" in heads[1], "--all: %s" % heads)
    p = gp("diagnose", os.path.join(runs, "zz-empty"))
    check(p.returncode == 2 and "no trace files" in p.stderr, "an empty run: %r" % p.stderr)


def case_sweep_cmd_errors():
    """sweep -- CMD: a missing program is refused before anything runs (was "exit -1" and an
    empty log); one that cannot start in one setting is said so and the others run; a program
    that writes no trace makes the table say so and the exit status 2 (was 0); {{x}} is a
    literal {x}."""
    d = fresh("sweepcmd")
    for prog, msg in (("nosuchprog-26", "no such program in PATH"),
                      ("./nosuch-26", "No such file or directory")):
        out = os.path.join(d, "missing")
        p = gp("sweep", "--no-profile", "--vary", "x=1,2", "-o", out, "--", prog, "{x}")
        check(p.returncode == 2 and "cannot run '%s': %s" % (prog, msg) in p.stderr,
              "%s: %d %r" % (prog, p.returncode, p.stderr))
        check(not os.path.exists(out), "%s: wrote %s" % (prog, out))
    out = os.path.join(d, "start")
    p = gp("sweep", "--no-profile", "--warmup", "0", "--vary", "p=nosuch-26,true", "-o", out,
           "--", "{p}")
    rows = [l for l in p.stdout.splitlines() if l.startswith("p=")]
    check(p.returncode == 2 and len(rows) == 2 and "could not start" in rows[0]
          and " s " in rows[1], "a program that cannot start: %d %s" % (p.returncode, rows))
    out = os.path.join(d, "notrace")
    p = gp("sweep", "--warmup", "0", "--vary", "x=a,b", "-o", out, "--", "echo", "{x}",
           "{{x}}")
    check(p.returncode == 2, "no trace: exit %d" % p.returncode)
    rows = [l for l in p.stdout.splitlines() if l.startswith("x=")]
    check(len(rows) == 2 and all("no trace from its profiled window" in r for r in rows),
          "no trace: %s" % rows)
    log = os.path.join(out, "01-x=a", "timed-1.log")
    check(os.path.exists(log) and open(log).read() == "a {x}\n", "{{x}}: %r" %
          (open(log).read() if os.path.exists(log) else None))


def case_negative_dur():
    """An X event with a negative "dur" is dropped with a warning (it was kept silently)."""
    ev = []
    for s in range(4):
        ev.append(dict(ph="X", name="ProfilerStep#%d" % s, cat="user_annotation", ts=s * 1000,
                       dur=1000, pid=1, tid=1))
        ev.append(dict(ph="X", name="aten::mm", cat="cpu_op", ts=s * 1000 + 10, dur=500, pid=1,
                       tid=1))
    ev.append(dict(ph="X", name="aten::backwards", cat="cpu_op", ts=2500, dur=-20000, pid=1,
                   tid=1))
    path = os.path.join(fresh("negdur"), "neg.json")
    json.dump({"traceEvents": ev}, open(path, "w"))
    p = gp("report", path)
    check(p.returncode == 0, "exit %d: %s" % (p.returncode, p.stderr))
    check('1 event has a negative "dur" (it ends before it starts): dropped' in p.stderr,
          "no warning: %r" % p.stderr)
    check("aten::backwards" not in p.stdout and "aten::mm" in p.stdout, p.stdout)
    check("step time: mean 1.000ms" in p.stdout, p.stdout)


def case_pipe_and_encoding():
    """gzip (and plain JSON) through a pipe and a FIFO read like the file (the magic was peeked
    with pread, which a pipe refuses); a UTF-16 file is named as such (was "must start with '{'
    or '['")."""
    src = os.path.join(DATA, "torch", "mlp_step.json.gz")
    want = gp("report", src, "-n", "3").stdout.split("\n", 1)[1]
    raw = gzip.open(src).read()
    for name, data in (("gzip", open(src, "rb").read()), ("plain", raw)):
        p = subprocess.run([BIN, "report", "/dev/stdin", "-n", "3"], input=data,
                           capture_output=True)
        check(p.returncode == 0 and p.stdout.decode().split("\n", 1)[1] == want,
              "%s through a pipe: %d %r" % (name, p.returncode, p.stderr))
    fifo = os.path.join(fresh("fifo"), "trace.fifo")
    os.mkfifo(fifo)
    writer = subprocess.Popen(["sh", "-c", 'cat "$1" > "$2"', "sh", src, fifo])
    p = gp("report", fifo, "-n", "3", timeout=60)
    writer.wait()
    check(p.returncode == 0 and p.stdout.split("\n", 1)[1] == want,
          "gzip through a FIFO: %d %r" % (p.returncode, p.stderr))
    d = fresh("utf16")
    for enc, says in (("utf-16", "UTF-16 (little-endian)"), ("utf-16-be", "UTF-16 (big-endian)"),
                      ("utf-32", "UTF-32 (little-endian)")):
        path = os.path.join(d, enc + ".json")
        open(path, "wb").write(raw.decode().encode(enc))
        p = gp("report", path)
        check(p.returncode == 2 and ("the file is %s text" % says) in p.stderr,
              "%s: %d %r" % (enc, p.returncode, p.stderr))


def case_unknown_command_hint():
    """An unknown command's hint names every command --help lists (it named 5 of 9)."""
    help_text = gp("--help").stdout
    block = help_text.split("commands:\n", 1)[1].split("\n\n", 1)[0]
    names = [l.split()[0] for l in block.splitlines() if l.strip()]
    p = gp("nosuchcommand")
    hint = [l for l in p.stderr.splitlines() if l.startswith("hint:")]
    check(p.returncode == 2 and len(hint) == 1, "%d %r" % (p.returncode, p.stderr))
    listed = hint[0].split("the commands are ", 1)[1].split(";")[0].replace(" and ", ", ")
    check(listed.split(", ") == names, "hint %r, --help %s" % (hint, names))


def case_sweep_out():
    """sweep -o: a file, a device, a link to nothing, a non-empty folder each refused saying
    what it is (all were "exists and is not empty"); an empty folder (or a link to one) used as
    it is, its mode kept (was removed and made again, 700 becoming 755); a path too long refused
    before any folder is made (was cut, making folders nobody named)."""
    d = fresh("sweepout")
    quick = ["--no-profile", "--warmup", "0", "--vary", "x=1", "--", "true", "{x}"]
    afile = os.path.join(d, "afile")
    open(afile, "w").write("x")
    full = os.path.join(d, "full")
    os.makedirs(os.path.join(full, "sub"))
    os.symlink("nowhere", os.path.join(d, "dangling"))
    for out, msg in ((afile, "is a file, not a folder"),
                     ("/dev/null", "is a device or special file, not a folder"),
                     (os.path.join(d, "dangling"), "is a symbolic link to nothing"),
                     (full, "is not empty")):
        p = gp("sweep", "-o", out, *quick)
        check(p.returncode == 2 and ("'%s'" % out) in p.stderr and msg in p.stderr,
              "-o %s: %d %r" % (out, p.returncode, p.stderr))
    empty = os.path.join(d, "empty")
    os.makedirs(empty)
    os.chmod(empty, 0o700)
    os.symlink("empty", os.path.join(d, "link"))
    for out in (empty, os.path.join(d, "link")):
        p = gp("sweep", "-o", out, *quick)
        check(p.returncode == 0 and os.path.exists(os.path.join(out, "sweep.json")),
              "-o %s: %d %r" % (out, p.returncode, p.stderr))
        for f in os.listdir(empty):
            path = os.path.join(empty, f)
            shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
    check(os.stat(empty).st_mode & 0o777 == 0o700, "mode %o" % (os.stat(empty).st_mode & 0o777))
    check(os.path.islink(os.path.join(d, "link")), "the link was replaced")
    long = os.path.join(d, "long", *(["a" * 200] * 21))
    p = gp("sweep", "-o", long, *quick)
    check(p.returncode == 2 and "is too long" in p.stderr, "long -o: %d %r" % (p.returncode,
                                                                               p.stderr[-200:]))
    check(not os.path.exists(os.path.join(d, "long")), "long -o made folders")


def case_rank_parsing():
    """job: a folder of *.pt.trace.json files says which other .json traces it leaves (4 files
    gave "3 ranks" silently); a distributedInfo.rank that is a string, null, negative or out of
    range is warned about and the trace ranked by name or order (a string or null became
    rank 0, the others fell back silently)."""
    src = os.path.join(DATA, "job", "healthy")
    names = sorted(os.listdir(src))
    d = fresh("ranks")
    for i, name in enumerate(names):
        dst = name if i < 3 else "other_%d.json" % i
        shutil.copy(os.path.join(src, name), os.path.join(d, dst))
    open(os.path.join(d, "summary.json"), "w").write("{}")
    p = gp("job", d)
    check("1 other .json file not read ('other_3.json')" in p.stderr, "left out: %r" % p.stderr)
    check("summary.json" not in p.stderr, "summary.json named: %r" % p.stderr)
    for bad in ('"2"', "null", "-5", "1e20", "2000000000"):
        d = fresh("rank_" + bad.strip('"'))
        for i, name in enumerate(names[:2]):
            doc = json.load(open(os.path.join(src, name)))
            doc["distributedInfo"]["rank"] = json.loads(bad) if i == 0 else 1
            json.dump(doc, open(os.path.join(d, "r%d.pt.trace.json" % i), "w"))
        p = gp("job", d, "--format", "json")
        written = json.dumps(json.loads(bad))
        check(("distributedInfo.rank is %s, not a rank" % written) in p.stderr,
              "rank %s: %r" % (bad, p.stderr[-300:]))
        ranks = json.loads(p.stdout)["ranks"] if p.returncode == 0 else []
        first = [r for r in ranks if r["trace"].endswith("r0.pt.trace.json")]
        check(len(first) == 1 and first[0]["rank_from"] != "distributedInfo",
              "rank %s: %s" % (bad, first))


def case_stream_columns():
    """A bad value 12 MB into a long line has its true column in every reader: mapped, streamed
    (GP_TRACE_NO_MMAP), gzip and a pipe (the streamed and gzip readers said "column 0")."""
    ev = ",".join('{"ph":"X","name":"op%d","ts":%d,"dur":1,"pid":1,"tid":1}' % (i, i)
                  for i in range(200000))
    doc = '{"schemaVersion":1,\n"traceEvents":[' + ev + ',{"ph":"X","ts":oops}]}'
    at = doc.index("oops")
    want = "at line 2, column %d (byte %d)" % (at - doc.rindex("\n", 0, at), at)
    d = fresh("columns")
    path = os.path.join(d, "t.json")
    open(path, "w").write(doc)
    gzip.open(path + ".gz", "wt").write(doc)
    runs = [("mapped", [BIN, "report", path], None, None),
            ("streamed", [BIN, "report", path], None, dict(os.environ, GP_TRACE_NO_MMAP="1")),
            ("gzip", [BIN, "report", path + ".gz"], None, None),
            ("pipe", [BIN, "report", "/dev/stdin"], doc.encode(), None)]
    for name, argv, stdin, env in runs:
        p = subprocess.run(argv, input=stdin, capture_output=True, env=env)
        err = p.stderr.decode()
        check(p.returncode == 2 and want in err, "%s: want %r in %r" % (name, want, err))


def case_shrink_while_read():
    """A trace cut (inside a name) while report has it mapped: "the file shrank while it was
    read" and the events before the cut (there was no warning, and the zeros past the new end
    were lexed one by one as a string's control characters: 9-47 s instead of 0.6 s)."""
    d = fresh("shrink")
    src = os.path.join(d, "t.json")
    with open(src, "w") as f:
        f.write('{"traceEvents":[\n')
        f.write(",\n".join('{"ph":"X","cat":"cpu_op","name":"aten::op%d_%s","pid":1,"tid":1,'
                           '"ts":%d,"dur":5}' % (i % 13, "n" * 40, i * 10)
                           for i in range(900000)))
        f.write("]}\n")
    size = os.path.getsize(src)
    with open(src, "rb") as f:
        f.seek(size // 4)
        cut = size // 4 + f.read(4096).index(b'"name":"') + 12  # inside a name
    p = subprocess.Popen([BIN, "report", src, "-n", "1"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    mapped = False
    while not mapped and p.poll() is None:
        try:
            mapped = src in open("/proc/%d/maps" % p.pid).read()
        except OSError:
            break
        time.sleep(0.0005)
    os.truncate(src, cut)
    t0 = time.monotonic()
    _, err = p.communicate(timeout=120)
    took = time.monotonic() - t0
    print("report ended %.2f s after the cut (%d of %d bytes left)" % (took, cut, size))
    if not mapped:
        print("skipped: report ended before the file could be cut")
        return
    check(p.returncode == 0, "exit %d: %s" % (p.returncode, err))
    check("the file shrank while it was read" in err, "no shrink warning: %r" % err[:500])


def case_make_run_quiet():
    """make run builds through scripts/quiet_build.sh: a build's 300 lines become one, its full
    output comes back on failure or with VERBOSE=1 (a first `make run` printed ~300 lines of
    build progress before the training output)."""
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    script = os.path.join(root, "scripts", "quiet_build.sh")
    log = os.path.join(fresh("quiet"), "build.log")
    fake = "i=0; while [ $i -lt 300 ]; do i=$((i+1)); echo \"[ $((i/3))%] Building C object $i.o\"; " \
           "done; exit $0"
    for code, verbose in ((0, ""), (3, ""), (0, "1")):
        env = dict(os.environ, VERBOSE=verbose)
        p = subprocess.run(["sh", script, log, "sh", "-c", fake, str(code)], capture_output=True,
                           text=True, env=env)
        lines = (p.stdout + p.stderr).splitlines()
        what = "exit %d, VERBOSE=%r" % (code, verbose)
        check(p.returncode == code, "%s: returned %d" % (what, p.returncode))
        if code == 0 and not verbose:
            check(len(lines) == 1 and lines[0].startswith("build: done in"), "%s: %s" % (what, lines))
            check(len(open(log).read().splitlines()) == 300, "%s: the log" % what)
        else:
            check(len([l for l in lines if "Building C object" in l]) == 300,
                  "%s: %d lines" % (what, len(lines)))
        if code:
            check("build: failed (exit 3)" in p.stderr, "%s: %r" % (what, p.stderr[:200]))
    p = subprocess.run(["make", "-n", "-C", root, "run", "BUILD=" + os.path.join(WORK, "nob")],
                       capture_output=True, text=True)
    check("scripts/quiet_build.sh" in p.stdout, "make -n run: %s" % p.stdout[-500:])


def case_run_quiet_rules():
    """run (CPU): the rules that did not fire are one line naming them, not one [ok] line each
    (15 on a CPU trace, "not applicable" after the findings); run --verbose lists them."""
    if not os.path.isdir("/usr/share/datasets/fashion-mnist"):
        print("skipped: no Fashion-MNIST")
        sys.exit(77)
    d = fresh("run")
    brief = gp("run", "--device", "cpu", "--steps", "30", "-o", os.path.join(d, "a"))
    verbose = gp("run", "--device", "cpu", "--steps", "30", "-o", os.path.join(d, "b"),
                 "--verbose")
    check(brief.returncode == 0 and verbose.returncode == 0,
          "exit %d/%d: %s" % (brief.returncode, verbose.returncode, verbose.stderr[-300:]))
    ok_brief = [l for l in brief.stdout.splitlines() if l.startswith("[ok]")]
    check(len(ok_brief) == 1 and "rules did not fire: " in ok_brief[0], "brief: %s" % ok_brief)
    named = ok_brief[0].split("did not fire: ")[1].split(" (")[0].split(", ") if \
        len(ok_brief) == 1 and "did not fire: " in ok_brief[0] else []
    fired = [l.split()[1] for l in brief.stdout.splitlines()
             if l.startswith(("[info]", "[warn]", "[crit]"))]
    rules = [l.split()[0] for l in gp("diagnose", "--list-rules").stdout.splitlines()
             if l[:2] == "GT"]
    check(sorted(named + fired) == sorted(rules), "named %s + fired %s != %s" % (named, fired,
                                                                                rules))
    ok_verbose = [l for l in verbose.stdout.splitlines() if l.startswith("[ok]")]
    check(len(ok_verbose) > 1 and not any("did not fire" in l for l in ok_verbose),
          "--verbose: %s" % ok_verbose)

CASES = {k[5:]: v for k, v in globals().items() if k.startswith("case_")}
if CASE not in CASES:
    sys.exit("unknown case '%s' (%s)" % (CASE, ", ".join(sorted(CASES))))
os.makedirs(WORK, exist_ok=True)
CASES[CASE]()
print("%d failures" % len(FAILS))
sys.exit(1 if FAILS else 0)
