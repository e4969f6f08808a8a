"""gprof-train sweep stopped by a signal (issue 26, High and Medium): SIGTERM, SIGHUP or SIGINT
to the sweep, or SIGINT to its whole process group (Ctrl-C), is forwarded to the running command,
which ends (no orphan left running); the sweep says "interrupted", prints the table of the
settings that ran and writes sweep.json marked interrupted (also when none had finished), and
exits 128 + the signal.
usage: test_sweep_signal.py GPROF_TRAIN WORKDIR [ROUNDS]"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time

BIN, WORK = sys.argv[1], sys.argv[2]
ROUNDS = int(sys.argv[3]) if len(sys.argv) > 3 else 1
FAILS = []

# The command writes its pid, then (but for x=1, which ends at once) runs a child in the
# foreground that writes its own pid and sleeps until killed: the signal must reach both.
SCRIPT = ("echo $$ >> \"$1/pids\"; [ \"$2\" = 1 ] && exit 0; "
          "sh -c 'echo $$ >> \"$1/pids\"; exec sleep 60' sh \"$1\"")


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL:", what)


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is not running: it waits for its parent (the test) to be reaped
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_for(pred, limit=20.0):
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.02)
    return False


def pids_in(work):
    try:
        with open(os.path.join(work, "pids")) as f:
            return [int(x) for x in f.read().split()]
    except (OSError, ValueError):
        return []


def start(name, values, warmup):
    work = os.path.join(WORK, name)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    out = os.path.join(work, "out")
    args = [BIN, "sweep", "--no-profile", "--warmup", warmup, "--vary", "x=" + values, "-o", out,
            "--", "sh", "-c", SCRIPT, "sh", work, "{x}"]
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    return p, work, out


def interrupt(name, sig, group, values="1,2,3", warmup="0", n_started=3):
    """Signal the sweep once the command of the setting in progress has started (its pid and its
    sleep's pid written): `n_started` pids in all."""
    p, work, out = start(name, values, warmup)
    started = wait_for(lambda: len(pids_in(work)) >= n_started)
    check(started, "%s: the commands did not start (%s)" % (name, pids_in(work)))
    if group:
        os.killpg(p.pid, sig)
    else:
        p.send_signal(sig)
    try:
        stdout, stderr = p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        stdout, stderr = p.communicate()
        check(False, "%s: the sweep did not end after the signal" % name)
    pids = pids_in(work)
    check(wait_for(lambda: not any(alive(x) for x in pids), 5),
          "%s: left running: %s" % (name, [x for x in pids if alive(x)]))
    check(p.returncode == 128 + sig, "%s: exit %d, want %d: %s" % (name, p.returncode,
                                                                     128 + sig, stderr))
    check("interrupted by " + signal.Signals(sig).name in stderr,
          "%s: no 'interrupted' message:\n%s" % (name, stderr))
    path = os.path.join(out, "sweep.json")
    check(os.path.exists(path), "%s: no sweep.json" % name)
    doc = json.load(open(path)) if os.path.exists(path) else {"settings": []}
    check(doc.get("interrupted") == signal.Signals(sig).name, "%s: json %s" % (name, doc))
    return stdout, stderr, doc


def test_signal_after_one_setting(sig, group):
    name = "%s-%s" % (signal.Signals(sig).name, "group" if group else "one")
    stdout, stderr, doc = interrupt(name, sig, group)
    rows = [l for l in stdout.splitlines() if l.startswith("x=")]
    check(len(rows) == 1 and rows[0].split()[1].replace(".", "").isdigit(),
          "%s: table rows %s\n%s" % (name, rows, stdout))
    check("2 settings not run" in stdout, "%s: table:\n%s" % (name, stdout))
    check("x=2: timed run 1/1... interrupted" in stderr, "%s: progress:\n%s" % (name, stderr))
    got = [(x["label"], len(x["times_s"])) for x in doc["settings"]]
    check(got == [("x=1", 1)], "%s: json settings %s" % (name, got))
    check(doc.get("n_settings") == 3, "%s: n_settings %s" % (name, doc.get("n_settings")))


def test_none_finished():
    stdout, _, doc = interrupt("none", signal.SIGTERM, False, values="2,3", warmup="1",
                               n_started=2)
    check(doc["settings"] == [], "none finished, yet settings: %s" % doc["settings"])
    check("2 settings not run" in stdout, "none finished: table:\n" + stdout)


def children(pid):
    out = []
    for d in os.listdir("/proc"):
        try:
            with open("/proc/%s/stat" % d) as f:
                if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(d))
        except (OSError, ValueError, IndexError):
            pass
    return out


def test_trainer_ctrl_c():
    """Ctrl-C (SIGINT to the process group) while the trainer's second setting runs: the trainer
    stops early and exits 0, which must not count as a timed run."""
    if not os.path.isdir("/usr/share/datasets/fashion-mnist"):
        print("skipped the trainer case: no Fashion-MNIST")
        return
    work = os.path.join(WORK, "trainer")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    out, err = os.path.join(work, "out"), os.path.join(work, "stderr")
    with open(err, "w") as ef:
        p = subprocess.Popen([BIN, "sweep", "--vary", "workers=0,1,2", "--vary", "device=cpu",
                              "--steps", "100000", "--warmup", "0", "--no-profile", "-o", out],
                             stdout=subprocess.PIPE, stderr=ef, text=True,
                             start_new_session=True)
    # the first setting is cut short too: a 100000-step run is far longer than the test
    running = wait_for(lambda: children(p.pid) and "[1/3]" in open(err).read(), 30)
    time.sleep(0.5)
    kids = children(p.pid)
    check(running and kids, "the trainer did not start: " + open(err).read())
    os.killpg(p.pid, signal.SIGINT)
    stdout, _ = p.communicate(timeout=60)
    stderr = open(err).read()
    check(p.returncode == 130, "trainer Ctrl-C: exit %d: %s" % (p.returncode, stderr))
    check("workers=0: timed run 1/1... interrupted" in stderr, "trainer Ctrl-C:\n" + stderr)
    check("0 of 3 settings finished" in stderr, "trainer Ctrl-C:\n" + stderr)
    check(wait_for(lambda: not any(alive(x) for x in kids), 5), "the trainer kept running")
    doc = json.load(open(os.path.join(out, "sweep.json")))
    check(doc["interrupted"] == "SIGINT" and doc["settings"] == [], "json: %s" % doc)
    check("3 settings not run" in stdout, "trainer Ctrl-C: table:\n" + stdout)


os.makedirs(WORK, exist_ok=True)
test_trainer_ctrl_c()
for _ in range(ROUNDS):
    test_signal_after_one_setting(signal.SIGTERM, False)
    test_signal_after_one_setting(signal.SIGHUP, False)
    test_signal_after_one_setting(signal.SIGINT, False)
    test_signal_after_one_setting(signal.SIGINT, True)
    test_none_finished()
print("%d failures" % len(FAILS))
sys.exit(1 if FAILS else 0)
