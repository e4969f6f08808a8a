"""png_variety.py SHOT.png MIN_COLOURS MIN_INK_PCT: decode an 8-bit RGB/RGBA PNG with the standard
library (zlib + the PNG filters) and fail unless it has at least MIN_COLOURS distinct colours and
at least MIN_INK_PCT percent of pixels that are not the background (the most common colour)."""
import collections
import struct
import sys
import zlib


def read_png(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, hdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = hdr
    assert depth == 8 and ctype in (2, 6) and interlace == 0, f"unsupported PNG {hdr}"
    bpp = 3 if ctype == 2 else 4
    raw, stride, rows, prev = zlib.decompress(idat), w * bpp, [], bytearray(w * bpp)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


def main(path, min_colours, min_ink):
    w, h, bpp, rows = read_png(path)
    counts = collections.Counter()
    for r in rows[::2]:  # every other row and column is plenty
        for x in range(0, w * bpp, 2 * bpp):
            counts[r[x:x + 3]] += 1
    total = sum(counts.values())
    bg, bg_n = counts.most_common(1)[0]
    ink = 100.0 * (total - bg_n) / total
    print(f"{path}: {w}x{h}, {len(counts)} colours, {ink:.1f}% non-background")
    if len(counts) < min_colours or ink < min_ink:
        print(f"FAIL: looks blank (need >= {min_colours} colours and >= {min_ink}% ink)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2]), float(sys.argv[3])))
