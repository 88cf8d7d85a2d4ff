# RUN: %PYTHON %s | FileCheck %s
# issue 14 (compile time): the JIT loads MLIR's C runner utilities
# (libmlir_c_runner_utils.so, which needs a second libMLIR.so: ~25 ms of a
# process's first compile) only for code that calls something only they
# provide (toolchain.needs_runner_utils): memrefCopy, or a function the
# process does not export.  malloc/free/memcpy, the matmul kernels and
# LLVM's OpenMP entry points come from elsewhere.

import os

import numpy as np

import gradir
from gradir.runtime.toolchain import external_functions, needs_runner_utils


def loaded() -> bool:
    with open("/proc/self/maps") as f:
        return "libmlir_c_runner_utils.so" in f.read()


def declared(*names) -> "object":
    text = "module {\n" + "".join(
        f"  llvm.func @{n}(!llvm.ptr) -> !llvm.ptr\n" for n in names) + \
        "  llvm.func @f() {\n    llvm.return\n  }\n}"
    return gradir.parse(text)


# A gradient step at 1 and 2 threads (kernel calls, malloc/free, OpenMP):
# compiled, run, close to the interpreter; the library never loaded.
step = gradir.parse("""
func.func @main(%x: tensor<256x300xf32>, %w: tensor<300x200xf32>) -> tensor<f32> {
  %h = "rlx.matmul"(%x, %w) : (tensor<256x300xf32>, tensor<300x200xf32>) -> tensor<256x200xf32>
  %t = "rlx.tanh"(%h) : (tensor<256x200xf32>) -> tensor<256x200xf32>
  %s = "rlx.sum"(%t) : (tensor<256x200xf32>) -> tensor<f32>
  return %s : tensor<f32>
}""")
gradir.run_pipeline(step, "builtin.module(rlx-gradient{func=main wrt=0,1})")
rng = np.random.default_rng(0)
args = [(0.1 * rng.standard_normal(s)).astype(np.float32) for s in ((256, 300), (300, 200))]
want = gradir.interpret(step, "main_adjoint", *args)
# Whole (one engine) and cut in two parts (runtime/partition.py: an engine each).
for split in ("0", "1"):
    os.environ["GRADIR_PARALLEL_COMPILE"] = split
    for threads in (1, 2):
        exe = gradir.compile(step, cache=False, threads=threads)
        got = exe["main_adjoint"](*args)
        ok = all(np.allclose(g, w, rtol=1e-4, atol=1e-4) for g, w in zip(got, want))
        print(f"split={split} threads={threads}: {type(exe).__name__} ok {ok}, "
              f"runner utils loaded {loaded()}")
# CHECK: split=0 threads=1: Executable ok True, runner utils loaded False
# CHECK: split=0 threads=2: Executable ok True, runner utils loaded False
# CHECK: split=1 threads=1: PartitionedExecutable ok True, runner utils loaded False
# CHECK: split=1 threads=2: PartitionedExecutable ok True, runner utils loaded False

# What needs them: memrefCopy, or a symbol no library of the process has.
for names in (("malloc", "free"), ("__kmpc_fork_call", "kmp_get_blocktime"),
              ("_mlir_ciface_gradir_kernel_0123456789_matmul_f32",), ("memrefCopy",),
              ("gradir_no_such_function",), ("expf",)):
    module = declared(*names)
    print(",".join(external_functions(module.operation)), needs_runner_utils(module.operation))
# CHECK: malloc,free False
# CHECK-NEXT: __kmpc_fork_call,kmp_get_blocktime False
# CHECK-NEXT: _mlir_ciface_gradir_kernel_0123456789_matmul_f32 False
# CHECK-NEXT: memrefCopy True
# CHECK-NEXT: gradir_no_such_function True
# CHECK-NEXT: expf False
