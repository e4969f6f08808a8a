#!/usr/bin/env python3
"""check_module.py: build facts of the trainer's CUDA module that no GPU test sees.
Architectures: with the default list, the module's fatbins (one per .cu file) hold machine code
for sm_75 (Turing, CUDA 13's oldest: T4, RTX 20xx), 80, 86, 90, 100 and 120, and compute_75 PTX
that the driver compiles for newer chips. RUNPATH: $ORIGIN (libgp_prof.so beside it, wherever
lib/ is installed) and the CUDA library folder this build found, at build time and for install.
usage: check_module.py MODULE CUDA_LIBDIR DEFAULT_ARCHS(0|1) INSTALL_RPATH"""
import struct
import subprocess
import sys

FATBIN_MAGIC = 0xBA55ED50
DEFAULT_SASS = {75, 80, 86, 90, 100, 120}
FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL:", what)


def section(data, wanted):
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    heads = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names = heads[shstrndx][4]
    for name, _t, _f, _a, off, size in heads:
        if data[names + name:data.index(b"\0", names + name)].decode() == wanted:
            return data[off:off + size]
    return b""


def fatbins(blob):
    """[(ptx archs, sass archs)] per fatbin in .nv_fatbin."""
    out, pos = [], 0
    while pos + 16 <= len(blob):
        magic, _ver, hsize, fsize = struct.unpack_from("<IHHQ", blob, pos)
        if magic != FATBIN_MAGIC:
            pos += 8  # fatbins are 8-byte aligned, padding between them
            continue
        ptx, sass, p, end = set(), set(), pos + hsize, pos + hsize + fsize
        while p + 32 <= end:
            kind, _v, ehs, psize = struct.unpack_from("<HHIQ", blob, p)
            arch = struct.unpack_from("<I", blob, p + 28)[0]
            (ptx if kind == 1 else sass).add(arch)
            p += ehs + psize
        out.append((ptx, sass))
        pos = end
    return out


def runpath(path):
    dyn = subprocess.run(["readelf", "-d", path], capture_output=True, text=True).stdout
    for line in dyn.splitlines():
        if "(RUNPATH)" in line or "(RPATH)" in line:
            return line.split("[", 1)[1].rstrip("]").split(":")
    return []


def main():
    if len(sys.argv) != 5:
        print(__doc__)
        return 2
    module, cuda_lib, default_archs, install_rpath = sys.argv[1:]
    data = open(module, "rb").read()
    bins = fatbins(section(data, ".nv_fatbin"))
    check(len(bins) >= 4, "a fatbin per kernel file: %d" % len(bins))
    for i, (ptx, sass) in enumerate(bins):
        check(75 in ptx, "fatbin %d has compute_75 PTX: %s" % (i, sorted(ptx)))
        if default_archs == "1":
            check(sass == DEFAULT_SASS, "fatbin %d has machine code for %s: %s"
                  % (i, sorted(DEFAULT_SASS), sorted(sass)))
    rp = runpath(module)
    check("$ORIGIN" in rp, "the module's RUNPATH has $ORIGIN: %s" % rp)
    check(cuda_lib in rp, "the module's RUNPATH has %s: %s" % (cuda_lib, rp))
    inst = install_rpath.split(";")
    check("$ORIGIN" in inst, "the install RUNPATH has $ORIGIN: %s" % inst)
    check(cuda_lib in inst, "the install RUNPATH has %s: %s" % (cuda_lib, inst))
    print("check_module: %s" % ("FAIL (%d)" % len(FAILS) if FAILS else "ok"))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
