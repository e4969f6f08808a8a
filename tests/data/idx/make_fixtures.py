#!/usr/bin/env python3
"""Write the small IDX fixtures the trainer tests use (run from this folder; deterministic).

Good set: 96 training and 40 test 28x28 images in 10 classes; class k is a bright horizontal bar
at rows 2k+2..2k+4 plus low noise, so a model learns it in a few steps. Corrupt variants:
bad magic, a truncated gzip stream, label/image count mismatch, a label out of range, trailing
bytes after the announced items.
"""
import gzip
import random
import struct

ROWS = COLS = 28


def images(n, rng):
    labels = [i % 10 for i in range(n)]
    rng.shuffle(labels)
    pix = bytearray()
    for k in labels:
        img = [[rng.randrange(0, 40) for _ in range(COLS)] for _ in range(ROWS)]
        for r in range(2 * k + 2, 2 * k + 5):
            for c in range(4, 24):
                img[r][c] = 200 + rng.randrange(0, 56)
        for row in img:
            pix.extend(row)
    return bytes(pix), bytes(labels)


def idx3(n, pix, magic=0x00000803):
    return struct.pack(">IIII", magic, n, ROWS, COLS) + pix


def idx1(n, labels):
    return struct.pack(">II", 0x00000801, n) + labels


def write_gz(name, data):
    with open(name, "wb") as f:
        f.write(gzip.compress(data, mtime=0))


def main():
    rng = random.Random(5)
    tr_pix, tr_lab = images(96, rng)
    te_pix, te_lab = images(40, rng)
    write_gz("train-images-idx3-ubyte.gz", idx3(96, tr_pix))
    write_gz("train-labels-idx1-ubyte.gz", idx1(96, tr_lab))
    write_gz("t10k-images-idx3-ubyte.gz", idx3(40, te_pix))
    write_gz("t10k-labels-idx1-ubyte.gz", idx1(40, te_lab))
    write_gz("bad-magic-idx3-ubyte.gz", idx3(40, te_pix, magic=0x00000903))
    whole = gzip.compress(idx3(40, te_pix), mtime=0)
    with open("truncated-idx3-ubyte.gz", "wb") as f:
        f.write(whole[: len(whole) // 2])
    write_gz("short-labels-idx1-ubyte.gz", idx1(39, te_lab[:39]))
    write_gz("bad-label-idx1-ubyte.gz", idx1(40, te_lab[:7] + b"\x0c" + te_lab[8:]))
    write_gz("trailing-idx1-ubyte.gz", idx1(40, te_lab) + b"\x00\x01")


if __name__ == "__main__":
    main()
