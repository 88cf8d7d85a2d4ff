# RUN: rm -rf %t && mkdir -p %t
# RUN: %PYTHON %gradir_src/bench/train_step.py --quick --models digits --threads 1 --json %t/train_step.json | FileCheck %s
# RUN: %PYTHON %s %t/train_step.json | FileCheck %s --check-prefix=JSON
# RUN: not %PYTHON %gradir_src/bench/train_step.py --models vgg 2>&1 | FileCheck %s --check-prefix=BAD
# bench/train_step.py cannot rot: a smoke run (--quick: 1 warm-up and 3
# timed steps) of the digits CNN's training step through gradir's drop-in
# module, PyTorch eager and torch.compile, whose parameters after 3 steps
# must equal eager's (the script fails otherwise), and its --json tables.
# No timing is checked.
# CHECK: # {{.*}} cores, vector ISA {{.*}}; load average
# CHECK: model thr steps gradir ms eager ms inductor ms eager/gradir inductor/gradir gradir 1st s inductor 1st s
# CHECK-NEXT: digits64 1 3 {{([0-9.]+ ){6}[0-9.]+}}
# CHECK: digits64 1 {{.*}} OK (conv1.weight)
# BAD: --models: of digits, lenet, resnet, not vgg

import json
import sys

if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        data = json.load(f)
    print("bench:", data["bench"], "; machine isa:", bool(data["provenance"]["machine"]["isa"]))
    steps, checks = data["tables"]
    print(steps["columns"])
    for row in steps["rows"]:
        print(row[:3], all(isinstance(v, (int, float)) and v > 0 for v in row[3:]))
    print(checks["rows"][0][0], checks["rows"][0][-1])
    print("notes:", any("--quick" in n for n in data["notes"]))
# JSON: bench: train_step ; machine isa: True
# JSON-NEXT: ['model', 'threads', 'timed steps', 'gradir ms', 'eager ms', 'inductor ms', 'eager/gradir', 'inductor/gradir', 'gradir first step s', 'inductor first step s']
# JSON-NEXT: ['digits64', 1, 3] True
# JSON-NEXT: digits64 OK
# JSON-NEXT: notes: True
