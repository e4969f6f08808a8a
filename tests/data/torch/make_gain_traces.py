#!/usr/bin/env python3
"""Real torch.profiler traces of GT18's two families at several batches, each beside the gain
of GT18's fix measured on the same machine, timed without the profiler in interleaved windows
(issue 24 §2: the predicted gain is checked against it, tests/analyze/torch_gains.py):
- lstm_bN: the LSTMCell loop (make_verdict_traces.LstmNet) against the same arithmetic as one
  nn.LSTM and one elementwise pass over the sequence (LstmSeqNet);
- lossloop_bN: an MLP whose smooth-L1 loss is a Python loop over the samples
  (make_verdict_traces.lossloop) against the same loss as one pass over the batch.
Writes gains/NAME.json.gz and gains/NAME.measured.json.

    chrt -f 10 python3 tests/data/torch/make_gain_traces.py [NAME...]   # with torch
"""
import gzip
import json
import os
import sys
import time

import make_verdict_traces as mv
import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gains")


FAMILIES = {"lstm": (mv.lstm, mv.lstm_fixed), "lossloop": (mv.lossloop, mv.lossloop_fixed)}


def write(name, active=8):
    fam, batch = name.rsplit("_b", 1)
    batch = int(batch)
    loop, fixed = FAMILIES[fam]
    doc = {"torch": torch.__version__, "threads": 1, "batch": batch}
    doc.update(mv.fix_gain_of(loop(batch), fixed(batch)))
    case = loop(batch)
    mv.timed(case, 5)
    time.sleep(1.0)  # SCHED_FIFO: start the profiled window with the real-time budget whole
    raw = os.path.join(OUT, name + ".json")
    mv.profiled(case, active, raw)
    with open(raw, "rb") as f, gzip.open(raw + ".gz", "wb", compresslevel=9) as g:
        g.write(f.read())
    os.remove(raw)
    with open(os.path.join(OUT, name + ".measured.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(name, doc)


def main():
    torch.set_num_threads(1)
    os.makedirs(OUT, exist_ok=True)
    for name in sys.argv[1:] or ["lstm_b4", "lstm_b64", "lstm_b256", "lossloop_b4",
                                 "lossloop_b64"]:
        write(name)


if __name__ == "__main__":
    main()
