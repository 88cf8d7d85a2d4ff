"""Prints the PTX of one gpu.binary (format=isa) of the MLIR read from stdin:
``ptx_of.py <gpu.module name>`` (for ptxas in the tests)."""

import re
import sys

text = sys.stdin.read()
m = re.search(r'gpu\.binary @' + re.escape(sys.argv[1]) + r' .*?assembly = "(.*?)"', text)
if m is None:
    sys.exit(f"no gpu.binary @{sys.argv[1]} with PTX")
raw = m.group(1)
ptx = re.sub(r'\\([0-9A-Fa-f]{2}|\\)', lambda x: "\\" if x.group(1) == "\\" else
             chr(int(x.group(1), 16)), raw)
sys.stdout.write(ptx)
