# RUN: rm -rf %t && mkdir -p %t
# RUN: %PYTHON %s %t | FileCheck %s
# export_library writes a self-describing shared library that a fresh
# Python process loads with numpy and ctypes only (importing mlir is made
# to fail there), giving the JIT's results.

import os
import subprocess
import sys

import numpy as np

import gradir

out = sys.argv[1]
import gradir.runtime
module = gradir.parse("""
func.func @main(%x: tensor<4x3xf32>, %w: tensor<3x2xf32>) -> tensor<f32> {
  %m = "rlx.matmul"(%x, %w) : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %t = "rlx.tanh"(%m) : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %s = "rlx.sum"(%t) : (tensor<4x2xf32>) -> tensor<f32>
  return %s : tensor<f32>
}""")
gradir.run_pipeline(module, "builtin.module(rlx-gradient)")
exe = gradir.compile(module)
path = exe.export_library(os.path.join(out, "model.so"))
print("files:", sorted(os.listdir(out)))
# (the matmul kernel library its matmul calls goes beside it)
# CHECK: files: ['libgradir_kernels_{{[0-9a-f]+_[0-9a-f]+}}.so', 'model.so']

rng = np.random.default_rng(0)
x = rng.standard_normal((4, 3)).astype(np.float32)
w = rng.standard_normal((3, 2)).astype(np.float32)
np.save(os.path.join(out, "x.npy"), x)
np.save(os.path.join(out, "w.npy"), w)
jit = exe["main_adjoint"](x, w)
np.savez(os.path.join(out, "jit.npz"), *jit)

CHILD = r"""
import sys, numpy as np
class NoMlir:
    def find_spec(self, name, path=None, target=None):
        if name == "mlir" or name.startswith("mlir."):
            raise ImportError("mlir is not available here")
sys.meta_path.insert(0, NoMlir())
sys.path.insert(0, sys.argv[2])
import gradir.runtime as rt
out = sys.argv[1]
import gradir.runtime
lib = rt.load(out + "/model.so")
x, w = np.load(out + "/x.npy"), np.load(out + "/w.npy")
got = lib["main_adjoint"](x, w)
jit = np.load(out + "/jit.npz")
err = max(float(np.abs(g - jit[f"arr_{i}"]).max()) for i, g in enumerate(got))
print("functions:", sorted(lib.functions), "max error:", err, "mlir imported:",
      any(m == "mlir" or m.startswith("mlir.") for m in sys.modules))
try:
    lib["main_adjoint"](x)
except rt.ArgumentError as e:
    print("error:", e)
"""
src_dir = os.path.join(os.path.dirname(gradir.__file__), "..")
proc = subprocess.run([sys.executable, "-c", CHILD, out, os.path.abspath(src_dir)],
                      capture_output=True, text=True)
print(proc.stdout, proc.stderr, end="")
# CHECK: functions: ['main', 'main_adjoint'] max error: 0.0 mlir imported: False
# CHECK: error: @main_adjoint takes 2 arguments, got 1

# The library depends on nothing beyond libc/libm and gradir's matmul kernel
# library beside it (no libMLIR, no LLVM).
needed = subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True).stdout
libs = sorted(l.split("[")[1].rstrip("]") for l in needed.splitlines() if "NEEDED" in l)
# (libm only when a libm function is called: f32 exp/tanh are inline polynomials)
print("needed beyond libc/libm:", [x for x in libs if x not in ("libc.so.6", "libm.so.6")],
      "libc:", "libc.so.6" in libs)
# CHECK: needed beyond libc/libm: ['libgradir_kernels_{{[0-9a-f]+_[0-9a-f]+}}.so'] libc: True

# memrefCopy (MLIR's copy between strided buffers) comes from the library's
# own shim: a library exported from ExecutionEngine-compiled code carries it
# (whether or not the code calls it; the LLVM tools path links it only when
# called, test/runtime/llvm_tools.py), and an MLP's adjoint gives the JIT's
# results through the library.
sys.path.insert(0, os.path.join(os.path.dirname(gradir.__file__), "..", "..", "examples"))
from mlp import build_mlp, differentiate, init_params  # noqa: E402

tools, os.environ["GRADIR_LLVM_TOOLS"] = os.environ.get("GRADIR_LLVM_TOOLS"), "0"
mlp = gradir.compile(differentiate(build_mlp(8, [4, 5, 3], "f64")))
if tools is None:
    del os.environ["GRADIR_LLVM_TOOLS"]
else:
    os.environ["GRADIR_LLVM_TOOLS"] = tools
lib2 = gradir.runtime.load(mlp.export_library(os.path.join(out, "mlp.so")))
asm = subprocess.run(["objdump", "-d", os.path.join(out, "mlp.so")], capture_output=True,
                     text=True).stdout
print("has memrefCopy:", "<memrefCopy>:" in asm)
args = [rng.standard_normal((8, 4)), np.arange(8) % 3, *init_params([4, 5, 3], np.float64)]
err = max(float(np.abs(a - b).max())
          for a, b in zip(lib2["main_adjoint"](*args), mlp["main_adjoint"](*args)))
print("mlp max error:", err)
# CHECK: has memrefCopy: True
# CHECK: mlp max error: 0.0

# A truncated or foreign file is refused before dlopen (which would map a
# truncated library and die of SIGBUS on first use).
data = open(path, "rb").read()
for name, blob in (("trunc.so", data[:3000]), ("short.so", data[:-100]), ("text.so", b"hello")):
    bad = os.path.join(out, name)
    open(bad, "wb").write(blob)
    try:
        gradir.runtime.load(bad)
    except OSError as err:
        print("refused:", name, str(err).startswith(bad))
# CHECK: refused: trunc.so True
# CHECK: refused: short.so True
# CHECK: refused: text.so True
