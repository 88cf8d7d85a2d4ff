# RUN: rm -rf %t && mkdir -p %t
# RUN: %PYTHON %s %t | FileCheck %s
# In a process that runs GNU libgomp (PyTorch's OpenMP runtime), gradir's
# parallel regions run on libgomp's pool while the workers may be hot (the
# block time gradir sets is > 0) and on LLVM's libomp while they are cold
# (runtime/gomp.py, native/gradir_gomp.c), through the JIT and through an
# exported library loaded there; the results are the bits libomp gives.
# Checked for a program whose parallel loops call the kernels' threaded
# drivers from inside another parallel loop (conv kernels over image blocks:
# nested regions, each with its own loop state), a matmul through the
# kernels' drivers and elementwise loops.  GRADIR_OPENMP=libomp keeps LLVM's
# runtime; a process without libgomp never loads gradir's entry points.

import os
import subprocess
import sys

import gradir

out = sys.argv[1]
SOURCE = """
func.func @main(%x: tensor<8x32x32x32xf32>, %w: tensor<32x32x3x3xf32>,
                %a: tensor<512x512xf32>, %b: tensor<512x512xf32>)
    -> (tensor<8x32x32x32xf32>, tensor<512x512xf32>) {
  %c = "rlx.conv2d"(%x, %w) {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>}
      : (tensor<8x32x32x32xf32>, tensor<32x32x3x3xf32>) -> tensor<8x32x32x32xf32>
  %e = "rlx.tanh"(%c) : (tensor<8x32x32x32xf32>) -> tensor<8x32x32x32xf32>
  %m = "rlx.matmul"(%a, %b) : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
  %s = "rlx.exp"(%m) : (tensor<512x512xf32>) -> tensor<512x512xf32>
  return %e, %s : tensor<8x32x32x32xf32>, tensor<512x512xf32>
}"""
with open(os.path.join(out, "m.mlir"), "w") as f:
    f.write(SOURCE)
gradir.compile(gradir.parse(SOURCE), threads=2).export_library(os.path.join(out, "m.so"))

CHILD = r"""
import ctypes, hashlib, os, sys
out, how, gomp = sys.argv[1], sys.argv[2], sys.argv[3] == "gomp"
if gomp:
    ctypes.CDLL("libgomp.so.1", mode=os.RTLD_GLOBAL)    # as importing torch does
import numpy as np
import gradir
from gradir.runtime import gomp as entry
rng = np.random.default_rng(0)
args = [rng.standard_normal(s).astype(np.float32) / 4 for s in
        ((8, 32, 32, 32), (32, 32, 3, 3), (512, 512), (512, 512))]
if how == "jit":
    fn = gradir.compile(gradir.parse(open(os.path.join(out, "m.mlir")).read()), threads=2)["main"]
else:
    fn = gradir.runtime.load(os.path.join(out, "m.so"))["main"]
results = [fn(*args) for _ in range(3)]
digests = {hashlib.sha256(b"".join(np.ascontiguousarray(r).tobytes() for r in res)).hexdigest()
           for res in results}
ref = gradir.interpret(gradir.parse(open(os.path.join(out, "m.mlir")).read()), "main", *args)
close = all(np.allclose(g, w, rtol=1e-4, atol=1e-5) for g, w in zip(results[0], ref))
c = entry.counters()
where = ("libgomp" if c.get("regions") else "") + ("libomp" if c.get("libomp_regions") else "")
print(how, "entry-points" if entry.loaded_library() else "no-entry-points",
      where or "plain", "widest", c.get("widest", "-"), "close", close, next(iter(digests))
      if len(digests) == 1 else "RUNS DIFFER")
"""

digests = {}
for env, how, gomp in (({}, "jit", "none"),
                       ({"KMP_BLOCKTIME": "1"}, "jit", "gomp"),
                       ({"KMP_BLOCKTIME": "0"}, "jit", "gomp"),
                       ({"KMP_BLOCKTIME": "1"}, "load", "gomp"),
                       ({"KMP_BLOCKTIME": "1", "GRADIR_OPENMP": "libomp"}, "jit", "gomp")):
    full = {k: v for k, v in os.environ.items() if k not in ("KMP_BLOCKTIME", "GRADIR_OPENMP")}
    full.update(env)
    proc = subprocess.run([sys.executable, "-c", CHILD, out, how, gomp], env=full,
                          capture_output=True, text=True, timeout=600)
    words = proc.stdout.split()
    if words:
        digests[words[-1]] = True
    print(" ".join(f"{k}={v}" for k, v in env.items()) or "defaults", gomp,
          " ".join(words[:-1]), proc.stderr.strip()[-800:])
print("same bits everywhere:", len(digests) == 1)
# CHECK: defaults none jit no-entry-points plain widest - close True
# CHECK-NEXT: KMP_BLOCKTIME=1 gomp jit entry-points libgomp widest 2 close True
# CHECK-NEXT: KMP_BLOCKTIME=0 gomp jit entry-points libomp widest 0 close True
# CHECK-NEXT: KMP_BLOCKTIME=1 gomp load entry-points libgomp widest 2 close True
# CHECK-NEXT: KMP_BLOCKTIME=1 GRADIR_OPENMP=libomp gomp jit no-entry-points plain widest - close True
# CHECK-NEXT: same bits everywhere: True
