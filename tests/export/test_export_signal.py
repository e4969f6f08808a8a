"""export never leaves its temporary file behind: SIGINT, SIGTERM or SIGHUP while an output is
being written (OUT.tmp.PID exists) removes it, and the process still dies of the signal.
usage: python3 test_export_signal.py GPROF_TRAIN WORKDIR"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time


def write_trace(path, n_steps):
    """A plain CPU trace big enough that writing its export takes a while."""
    ev, ts = [], 0
    for step in range(n_steps):
        ev.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step}", "pid": 1,
                   "tid": 1, "ts": ts, "dur": 1000})
        for i in range(50):
            ev.append({"ph": "X", "cat": "cpu_op", "name": f"aten::op{i % 7}", "pid": 1, "tid": 1,
                       "ts": ts + i * 20, "dur": 15, "args": {"External id": step * 50 + i}})
        ts += 1000
    with open(path, "w") as f:
        json.dump({"traceEvents": ev}, f)


def interrupt_once(binary, trace, out, sig):
    """Start an export, signal it while its temporary file exists. @return (caught, returncode)."""
    proc = subprocess.Popen([binary, "export", trace, "--perfetto", out],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    tmp = f"{out}.tmp.{proc.pid}"
    caught = False
    while proc.poll() is None:
        if os.path.exists(tmp):
            proc.send_signal(sig)
            caught = True
            break
        time.sleep(0.0005)
    return caught, proc.wait(), tmp


def main(binary, work):
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    trace = os.path.join(work, "big.json")
    write_trace(trace, 4000)
    caught_any = False
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        out = os.path.join(work, f"out_{sig.name}.json")
        for _ in range(5):
            caught, rc, tmp = interrupt_once(binary, trace, out, sig)
            if caught:
                break
        left = [f for f in os.listdir(work) if ".tmp." in f]
        assert not left, f"{sig.name}: temporary files left behind: {left}"
        if caught:
            caught_any = True
            assert rc == -sig, f"{sig.name}: exit {rc}, expected death by the signal"
    if not caught_any:
        print("skipped: every export finished before it could be interrupted")
        return 77
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
