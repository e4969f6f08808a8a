#!/usr/bin/env python3
"""Real torch.profiler traces of the LSTMCell loop (make_verdict_traces.LstmNet) at several
batches, each beside the gain of GT18's fix measured on the same machine: the loop against the
same arithmetic as one nn.LSTM and one elementwise pass over the sequence (LstmSeqNet), timed
without the profiler in interleaved windows (issue 24 §2: the predicted gain is checked against
it, tests/analyze/torch_gains.py). Writes gains/lstm_bN.json.gz and gains/lstm_bN.measured.json.

    chrt -f 10 python3 tests/data/torch/make_gain_traces.py [BATCH...]   # with torch
"""
import gzip
import json
import os
import sys
import time

import make_verdict_traces as mv
import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gains")


def write(batch, active=8):
    doc = {"torch": torch.__version__, "threads": 1, "batch": batch}
    doc.update(mv.fix_gain(batch))
    case = mv.lstm(batch)
    mv.timed(case, 5)
    time.sleep(1.0)  # SCHED_FIFO: start the profiled window with the real-time budget whole
    raw = os.path.join(OUT, "lstm_b%d.json" % batch)
    mv.profiled(case, active, raw)
    with open(raw, "rb") as f, gzip.open(raw + ".gz", "wb", compresslevel=9) as g:
        g.write(f.read())
    os.remove(raw)
    with open(os.path.join(OUT, "lstm_b%d.measured.json" % batch), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(batch, doc)


def main():
    torch.set_num_threads(1)
    os.makedirs(OUT, exist_ok=True)
    for b in [int(x) for x in sys.argv[1:]] or [4, 64, 256]:
        write(b)


if __name__ == "__main__":
    main()
