#!/bin/sh
# Rewrite the GT19/GT01 contention fixtures here from running programs: the trainer on the CPU
# beside busy loops (bench/accuracy_contention.sh, which prints what each case should give), and
# the same traces with the trainer's CPU accounting removed (*.timing.json.gz: what the rule sees
# of a PyTorch trace). The verdicts they must give are in expected.txt, checked by
# tests/rules/check_contention.py; after a rewrite, check the printed table agrees with it.
# usage: tests/data/rules/contention/make.sh BUILD_DIR
set -eu
here=$(cd "$(dirname "$0")" && pwd)
sh "$here/../../../../bench/accuracy_contention.sh" "${1:-build}" "$here"
