"""The baseline: libcst.parse_module over every file named in a list file, one process."""

import sys

import libcst

for path in open(sys.argv[1]).read().splitlines():
    with open(path, "rb") as fh:
        data = fh.read()
    try:
        libcst.parse_module(data)
    except Exception:
        pass
