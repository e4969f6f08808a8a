#!/bin/sh
# The bundled trainer's partial last batch on a real GPU, for GT14's first-time work
# (tests/data/h100/): the mlp, batches of 64 over a training set of 10000 samples (random IDX
# images and labels, written here: the GPU machines have no dataset), 300 steps, so step 156
# holds the epoch's last 16 samples and cuBLAS meets that shape for the first time.
#
#   sh bench/gpu_partial_batch.sh GPROF_TRAIN OUT_DIR [BATCH]
# Writes OUT_DIR/mlp_partial_batch.json.gz and prints GT14's verdict on it. Needs a CUDA build.
set -eu
G=${1:?usage: gpu_partial_batch.sh GPROF_TRAIN OUT_DIR [BATCH]}
OUT=${2:?usage: gpu_partial_batch.sh GPROF_TRAIN OUT_DIR [BATCH]}
BATCH=${3:-64}
mkdir -p "$OUT/idx"
python3 - "$OUT/idx" <<'PY'
import os, random, struct, sys
d = sys.argv[1]
for part, n in (("train", 10000), ("t10k", 2000)):
    with open(os.path.join(d, part + "-images-idx3-ubyte"), "wb") as f:
        f.write(struct.pack(">IIII", 2051, n, 28, 28) + os.urandom(n * 784))
    with open(os.path.join(d, part + "-labels-idx1-ubyte"), "wb") as f:
        f.write(struct.pack(">II", 2049, n) + bytes(random.randrange(10) for _ in range(n)))
PY
"$G" run --device cuda --data "$OUT/idx" --batch-size "$BATCH" --steps 300 -o "$OUT/runs" \
    --no-report
cp "$OUT"/runs/*/*.pt.trace.json.gz "$OUT/mlp_partial_batch.json.gz"
"$G" diagnose "$OUT/mlp_partial_batch.json.gz" | grep -A3 GT14
