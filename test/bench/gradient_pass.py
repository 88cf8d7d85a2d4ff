# RUN: rm -rf %t && mkdir -p %t
# RUN: %PYTHON %gradir_src/bench/gradient_pass.py 10 --repeat 1 --shared-depths 10,20 --models mlp --json %t/gradient_pass.json | FileCheck %s
# RUN: %PYTHON %s %t/gradient_pass.json | FileCheck %s --check-prefix=JSON
# RUN: not %PYTHON %gradir_src/bench/gradient_pass.py --models mlp,vgg 2>&1 | FileCheck %s --check-prefix=BAD
# bench/gradient_pass.py cannot rot: a small run (10 dense-tanh layers,
# the residual and shared-weight chains at 10 and 20 layers, the imported
# MLP, best of 1) of rlx-gradient against TVM Relax's Gradient, and its
# --json tables.  With TVM installed its columns hold times, without it
# "-" (None in the JSON): both pass.  No timing is checked.
# CHECK: machine: {{.*}} cores, load average
# CHECK-NEXT: N fwd ops | raw ms ops/s | default ms ops/s per-op vs N=100 | remat ms ops/s | TVM ms ops/s TVM/default
# CHECK-NEXT: 10 31 | {{[0-9.]+ [0-9.]+}} | {{[0-9.]+ [0-9.]+ [0-9.]+}} | {{[0-9.]+ [0-9.]+}} | {{([0-9.]+ [0-9.]+ [0-9.]+|- - -)$}}
# CHECK: chain N fwd ops | raw ms ops/s | default ms ops/s us/op per-op vs N=10 | TVM ms ops/s TVM/default
# CHECK-NEXT: residual 10 31 | {{[0-9.]+ [0-9.]+}} | {{[0-9.]+ [0-9.]+ [0-9.]+}} 1.00 | {{([0-9.]+ [0-9.]+ [0-9.]+|- - -)$}}
# CHECK-NEXT: residual 20 61 | {{[0-9.]+ [0-9.]+}} | {{[0-9.]+ [0-9.]+ [0-9.]+ [0-9.]+}} | {{([0-9.]+ [0-9.]+ [0-9.]+|- - -)$}}
# CHECK-NEXT: shared 10 21 | {{[0-9.]+ [0-9.]+}} | {{[0-9.]+ [0-9.]+ [0-9.]+}} 1.00 | {{([0-9.]+ [0-9.]+ [0-9.]+|- - -)$}}
# CHECK-NEXT: shared 20 41 | {{[0-9.]+ [0-9.]+}} | {{[0-9.]+ [0-9.]+ [0-9.]+ [0-9.]+}} | {{([0-9.]+ [0-9.]+ [0-9.]+|- - -)$}}
# CHECK: model params fwd ops TVM ops | raw ms default ms | TVM ms TVM/default | TVM refused
# CHECK-NEXT: mlp 6 13 {{(13|-)}} | {{[0-9.]+ [0-9.]+}} | {{([0-9.]+ [0-9.]+|- -)}} | -
# CHECK-NEXT: mlp: 784-512-512-10 with relu
# CHECK-NEXT: after: {{.*}} load average
# BAD: error: --models: of resnet, {{.*}} (or none), not vgg
# BAD-NEXT: usage: {{.*}}bench/gradient_pass.py

import json
import sys


def tvm_consistent(cells) -> bool:
    """TVM's cells: all None (no TVM) or all positive numbers."""
    return (all(c is None for c in cells)
            or all(isinstance(c, (int, float)) and c > 0 for c in cells))


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        data = json.load(f)
    print("bench:", data["bench"], "; machine isa:", bool(data["provenance"]["machine"]["isa"]))
    dense, chains, models = data["tables"]
    for table in (dense, chains, models):
        print(table["title"].split(",")[0], "|", len(table["columns"]),
              len(table["formats"]) == len(table["columns"]))
    print(dense["columns"][-3:])
    for row in dense["rows"]:
        print(row[:2], all(v > 0 for v in row[2:9]), tvm_consistent(row[9:]))
    for row in chains["rows"]:
        print(row[:3], all(v > 0 for v in row[3:9]), tvm_consistent(row[9:]))
    print(models["columns"])
    for row in models["rows"]:
        print(row[:3], row[3] in (None, 13), all(v > 0 for v in row[4:6]),
              tvm_consistent(row[6:8]), row[8])
    print("notes:", len(data["notes"]), any("mlp: 784-512-512-10" in n for n in data["notes"]))
# JSON: bench: gradient_pass ; machine isa: True
# JSON-NEXT: rlx-gradient on N dense-tanh layers | 12 True
# JSON-NEXT: rlx-gradient on chains that read one value in every layer (residual: input and constant; shared: one weight) | 12 True
# JSON-NEXT: rlx-gradient on models imported from PyTorch | 9 True
# JSON-NEXT: ['TVM ms', 'TVM ops/s', 'TVM / default']
# JSON-NEXT: [10, 31] True True
# JSON-NEXT: ['residual', 10, 31] True True
# JSON-NEXT: ['residual', 20, 61] True True
# JSON-NEXT: ['shared', 10, 21] True True
# JSON-NEXT: ['shared', 20, 41] True True
# JSON-NEXT: ['model', 'parameters', 'gradir forward ops', 'TVM forward ops', 'raw ms', 'default ms', 'TVM ms', 'TVM / default', 'TVM refused']
# JSON-NEXT: ['mlp', 6, 13] True True True None
# JSON-NEXT: notes: 4 True
