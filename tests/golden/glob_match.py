#!/usr/bin/env python3
"""glob_match.py OUTPUT GLOB [--update]: compare a command's output with a glob golden.

A glob golden is the expected output where a line `...` stands for any number (zero or more) of
quiet findings: `[ok]` lines of `diagnose` text and findings with "severity":"ok" in its JSON.
Every other line must match exactly, so a rule that starts firing still fails the test, while
adding a rule that stays quiet changes no golden but the ones about the catalogue itself.
--update writes GLOB from OUTPUT, each run of quiet lines replaced by `...`."""
import sys


def quiet(line):
    return line.startswith("[ok]   GT") or '"severity":"ok"' in line


def collapse(lines):
    out = []
    for line in lines:
        if quiet(line):
            if not out or out[-1] != "...":
                out.append("...")
        else:
            out.append(line)
    return out


def matches(got, want):
    """`...` matches a run of quiet lines; everything else line for line (greedy is exact:
    `...` is never followed by a quiet line in a collapsed golden)."""
    i = 0
    for w in want:
        if w == "...":
            while i < len(got) and quiet(got[i]):
                i += 1
        elif i < len(got) and got[i] == w:
            i += 1
        else:
            return False, i
    return i == len(got), i


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        got = f.read().splitlines()
    if "--update" in argv:
        with open(argv[2], "w", encoding="utf-8") as f:
            f.write("".join(line + "\n" for line in collapse(got)))
        return 0
    with open(argv[2], encoding="utf-8") as f:
        want = f.read().splitlines()
    ok, at = matches(got, want)
    if not ok:
        print("output differs from %s at output line %d:" % (argv[2], at + 1))
        for n, line in enumerate(got[max(0, at - 2):at + 3], start=max(0, at - 2) + 1):
            print("%5d %s %s" % (n, ">" if n == at + 1 else " ", line[:200]))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
