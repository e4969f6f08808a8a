#!/usr/bin/env python3
"""host_cu.py IN.cu OUT.cc: the CUDA source as host C++ for the kernels-on-the-CPU shim
(cuda_cpu_shim.h). The only change is the launch syntax, which C++ lacks:
kernel<T><<<grid, block, smem, stream>>>(args) becomes
cusim_launch(grid, block, smem, stream, kernel<T>, args). Everything else is compiled as it is."""
import re
import sys

LAUNCH = re.compile(r"([A-Za-z_]\w*(?:<[^<>;]*>)?)\s*<<<(.*?)>>>\s*\(", re.S)


def main():
    src = open(sys.argv[1], encoding="utf-8").read()
    out, n = LAUNCH.subn(lambda m: "cusim_launch(%s, %s, " % (m.group(2), m.group(1)), src)
    if n == 0 and "<<<" in src:
        sys.exit("host_cu.py: %s: a launch was not rewritten" % sys.argv[1])
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        f.write('#line 1 "%s"\n' % sys.argv[1])
        f.write(out)


if __name__ == "__main__":
    main()
