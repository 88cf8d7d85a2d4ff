# RUN: rm -rf %t && mkdir -p %t
# RUN: %PYTHON %gradir_src/bench/attention.py --quick --json %t/attention.json | FileCheck %s
# RUN: %PYTHON %s %t/attention.json | FileCheck %s --check-prefix=JSON
# RUN: not %PYTHON %gradir_src/bench/attention.py --seqs 2>&1 | FileCheck %s --check-prefix=BAD
# bench/attention.py cannot rot: a smoke run (--quick: seq 128 and 512, 2
# heads, one warm-up and 2 timed calls) of gradir's attention without and
# with rlx-fuse-attention and PyTorch's scaled_dot_product_attention,
# forward and gradient, every result checked against PyTorch's (the script
# fails otherwise), the peak memory children, and its --json tables.  At
# the default cache-bytes seq 128's scores fit (not fused), seq 512's are
# fused in blocks of 256 rows.  No timing is checked.
# CHECK: # {{.*}} cores, vector ISA {{.*}}; load average
# CHECK: seq batch heads threads block rows fwd unfused ms fwd fused ms fwd torch ms grad unfused ms grad fused ms grad torch ms
# CHECK-NEXT: 128 1 2 1 - {{([0-9.]+ ){9}[0-9.]+$}}
# CHECK-NEXT: 512 1 2 1 256 {{([0-9.]+ ){9}[0-9.]+$}}
# CHECK: seq batch heads fwd unfused MiB fwd fused MiB fwd torch MiB grad unfused MiB grad fused MiB grad torch MiB
# CHECK-NEXT: 128 1 2 {{([0-9.]+ ){5}[0-9.]+$}}
# CHECK-NEXT: 512 1 2 {{([0-9.]+ ){5}[0-9.]+$}}
# CHECK: seq 128: unfused OK, fused OK
# CHECK: seq 512: unfused OK, fused OK
# BAD: error: --seqs takes 1 value

import json
import sys

if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        data = json.load(f)
    print("bench:", data["bench"], "; machine isa:", bool(data["provenance"]["machine"]["isa"]))
    times, memory = data["tables"]
    print(times["columns"][:5])
    for row in times["rows"]:
        print(row[:5], all(isinstance(v, (int, float)) and v > 0 for v in row[5:]))
    for row in memory["rows"]:
        print(row[:3], all(isinstance(v, (int, float)) and v >= 0 for v in row[3:]))
    print("notes:", any("--quick" in n for n in data["notes"]))
# JSON: bench: attention ; machine isa: True
# JSON-NEXT: ['seq', 'batch', 'heads', 'threads', 'block rows']
# JSON-NEXT: [128, 1, 2, 1, None] True
# JSON-NEXT: [512, 1, 2, 1, 256] True
# JSON-NEXT: [128, 1, 2] True
# JSON-NEXT: [512, 1, 2] True
# JSON-NEXT: notes: True
