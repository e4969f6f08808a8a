"""Read an event file written by the trainer's tfevents writer back with TensorBoard's own
reader (EventAccumulator), and check every scalar, its step and the file version record.
usage: test_tfevents_read.py TFEVENTS_WRITE_EXE WORK_DIR"""
import os
import shutil
import subprocess
import sys

from tensorboard.backend.event_processing import event_accumulator
from tensorboard.backend.event_processing.event_file_loader import LegacyEventFileLoader

N = 25


def main():
    exe, work = sys.argv[1], sys.argv[2]
    run = os.path.join(work, "scalars_run")
    shutil.rmtree(run, ignore_errors=True)
    os.makedirs(work, exist_ok=True)
    path = subprocess.run([exe, run, str(N)], check=True, capture_output=True,
                          text=True).stdout.strip()
    assert os.path.basename(path).startswith("events.out.tfevents."), path

    # The raw loader checks the TFRecord CRCs; the first event must be the file version.
    events = list(LegacyEventFileLoader(path).Load())
    assert events[0].file_version == "brain.Event:2", events[0]
    assert len(events) == 1 + 3 * N, len(events)

    acc = event_accumulator.EventAccumulator(run, size_guidance={"scalars": 0})
    acc.Reload()
    tags = sorted(acc.Tags()["scalars"])
    assert tags == ["train/accuracy", "train/loss", "train/samples_per_sec"], tags
    loss = acc.Scalars("train/loss")
    assert [e.step for e in loss] == list(range(N)), [e.step for e in loss]
    for e in loss:
        assert abs(e.value - 1.0 / (e.step + 1)) < 1e-6, e
        assert e.wall_time > 1.6e9, e
    assert acc.Scalars("train/samples_per_sec")[-1].value == 1000.0 + N - 1
    acc_vals = [e.value for e in acc.Scalars("train/accuracy")]
    assert abs(acc_vals[10] - 10.0 / N) < 1e-6, acc_vals
    print(f"ok: {len(events)} events in {path} read back by tensorboard")


if __name__ == "__main__":
    main()
