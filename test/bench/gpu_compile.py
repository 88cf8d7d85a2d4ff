# RUN: rm -rf %t && mkdir -p %t
# RUN: %PYTHON %gradir_src/bench/gpu_compile.py --quick --rounds 1 --workloads mlp --json %t/gpu_compile.json | FileCheck %s
# RUN: %PYTHON %s %t/gpu_compile.json | FileCheck %s --check-prefix=JSON
# RUN: not %PYTHON %gradir_src/bench/gpu_compile.py --workloads vgg 2>&1 | FileCheck %s --check-prefix=BAD
# bench/gpu_compile.py cannot rot: one round of the MLP step (--quick
# shapes) compiled for the GPU without a cache, on a cache miss and on a
# hit, each in a fresh process; the script refuses a "miss" that hit or a
# "hit" that compiled (the executable's cache_hit). No timing is checked.
# CHECK: # {{.*}} cores, vector ISA {{.*}}; load average {{.*}}; chip sm_90
# CHECK: mlp: imported and differentiated in
# CHECK-NEXT: fp32 no cache median
# CHECK-NEXT: fp32 miss median
# CHECK-NEXT: fp32 hit median
# CHECK-NEXT: bf16 no cache median
# CHECK-NEXT: bf16 miss median
# CHECK-NEXT: bf16 hit median
# BAD: unknown workloads ['vgg']

import json
import sys

if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        data = json.load(f)
    print("bench:", data["bench"], "; machine isa:", bool(data["provenance"]["machine"]["isa"]))
    (table,) = data["tables"]
    print(table["columns"])
    for row in table["rows"]:
        print(row[:3], all(isinstance(v, (int, float)) and v > 0 for v in row[3:]))
# JSON: bench: gpu_compile ; machine isa: True
# JSON-NEXT: ['workload', 'arithmetic', 'compile', 'median s', 'min s', 'max s', '/ no cache']
# JSON-NEXT: ['mlp', 'fp32', 'no cache'] True
# JSON-NEXT: ['mlp', 'fp32', 'miss'] True
# JSON-NEXT: ['mlp', 'fp32', 'hit'] True
# JSON-NEXT: ['mlp', 'bf16', 'no cache'] True
# JSON-NEXT: ['mlp', 'bf16', 'miss'] True
# JSON-NEXT: ['mlp', 'bf16', 'hit'] True
