# RUN: rm -rf %t && mkdir -p %t
# RUN: %PYTHON %gradir_src/bench/gradbench.py --quick --json %t/gradbench.json | FileCheck %s
# RUN: %PYTHON %s %t/gradbench.json | FileCheck %s --check-prefix=JSON
# RUN: not %PYTHON %gradir_src/bench/gradbench.py --evals hello,nope 2>&1 | FileCheck %s --check-prefix=BAD
# bench/gradbench.py cannot rot: a smoke run (--quick: the smallest size of
# each of GradBench's 12 evals) of gradir against the JAX and PyTorch peers
# (bench/gradbench_peers/), every row printed in GradBench's order, no peer
# failing, and its --json table, where every peer's output must agree with
# gradir's (GradBench's measure, 1e-4). No timing is checked. (A gradir
# eval whose compilation aborts shows "-" for gradir and is left to
# test/tools/gradbench/.)
# CHECK: # {{.*}} cores, vector ISA {{.*}}; one thread; {{.*}}load average
# CHECK-NEXT: eval{{ +}}function{{ +}}size{{ +}}gradir ms{{ +}}jax ms{{ +}}torch ms{{ +}}jax/gradir{{ +}}torch/gradir{{ +}}max diff
# CHECK-NOT: failed:
# CHECK: hello{{ +}}square{{ +}}x=1.5
# CHECK: hello{{ +}}double
# CHECK: lse{{ +}}primal{{ +}}n=2500
# CHECK: lse{{ +}}gradient
# CHECK: llsq{{ +}}gradient{{ +}}n=16,m=128
# CHECK: gmm{{ +}}jacobian{{ +}}d=2,k=5,n=1000
# CHECK: det{{ +}}gradient{{ +}}ell=5
# CHECK: lstm{{ +}}jacobian{{ +}}l=2,c=1024
# CHECK: ode{{ +}}gradient{{ +}}n=1000,s=10
# CHECK: kmeans{{ +}}dir{{ +}}k=100,n=1000,d=16
# CHECK: ba{{ +}}jacobian{{ +}}ba1 n=49,m=7776,p=31843
# CHECK: ht{{ +}}jacobian{{ +}}c=100
# CHECK: particle{{ +}}rr{{ +}}w=0 {{.*}} -{{ +}}-{{ +}}-{{ +}}-{{ +}}-{{$}}
# CHECK: particle{{ +}}fr
# CHECK: saddle{{ +}}ff{{ +}}start=(1,1)
# CHECK: saddle{{ +}}rf
# CHECK-NOT: failed:
# CHECK: # load average {{.*}} at the end
# BAD: --evals: nope not among hello, lse, llsq, gmm, det, lstm, ode, kmeans, ba, ht, particle, saddle

import json
import sys

if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        data = json.load(f)
    print("bench:", data["bench"], "; machine isa:", bool(data["provenance"]["machine"]["isa"]))
    (table,) = data["tables"]
    print(table["columns"])
    rows = table["rows"]
    print("evals:", " ".join(dict.fromkeys(r[0] for r in rows)))
    # jax and torch ran wherever GradBench's tools (or the natural framework
    # code) have the function: everything but particle/saddle's PyTorch and
    # the reverse-outer JAX rows
    missing = sorted({(r[0], p) for r in rows for i, p in ((4, "jax"), (5, "torch"))
                      if r[i] is None})
    print("no peer:", missing)
    print("differences within 1e-4:", all(r[8] is None or r[8] <= 1e-4 for r in rows))
    print("notes:", any("--quick" in n for n in data["notes"]),
          all(any(n.split(":")[0].startswith(ev) for n in data["notes"])
              for ev in ("hello", "lse", "llsq", "gmm", "det", "lstm", "ode", "kmeans",
                         "ba", "ht", "particle")))
# JSON: bench: gradbench ; machine isa: True
# JSON-NEXT: ['eval', 'function', 'size', 'gradir ms', 'jax ms', 'torch ms', 'jax/gradir', 'torch/gradir', 'max difference']
# JSON-NEXT: evals: hello lse llsq gmm det lstm ode kmeans ba ht particle saddle
# JSON-NEXT: no peer: [('particle', 'jax'), ('particle', 'torch'), ('saddle', 'jax'), ('saddle', 'torch')]
# JSON-NEXT: differences within 1e-4: True
# JSON-NEXT: notes: True True
