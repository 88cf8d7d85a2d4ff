# RUN: rm -rf %t && mkdir -p %t
# RUN: env GRADIR_PARALLEL_COMPILE=1 %PYTHON %s %t | FileCheck %s
# issue 14 (compile time): gradir.compile cuts a large function in two parts
# lowered and compiled at once (runtime/partition.py).  The split executable
# matches the interpreter and the whole-module compile, at 1 and 2 threads;
# its glue handles values crossing the cut, a crossing value that is also a
# result, a result returned twice, constants used on both sides and an
# argument only the second part reads; export_library links the parts with
# a C glue that gradir.runtime.load runs in a fresh process; the compile
# cache stores and reloads it; functions that cannot be cut compile whole.

import os
import subprocess
import sys

import numpy as np

import gradir
from gradir.runtime import cache as cache_mod
from gradir.runtime import partition
from gradir.runtime.signature import CompileError

out = sys.argv[1]
text = """
func.func @main(%x: tensor<33x40xf32>, %w1: tensor<40x24xf32>, %w2: tensor<24x7xf32>,
                %b: tensor<7xf32>) -> (tensor<f32>, tensor<33x24xf32>, tensor<33x24xf32>,
                                       tensor<33x7xf32>) {
  %c = arith.constant dense<0.5> : tensor<f32>
  %h = "rlx.matmul"(%x, %w1) : (tensor<33x40xf32>, tensor<40x24xf32>) -> tensor<33x24xf32>
  %t = "rlx.tanh"(%h) : (tensor<33x24xf32>) -> tensor<33x24xf32>
  %s = "rlx.multiply"(%t, %c) : (tensor<33x24xf32>, tensor<f32>) -> tensor<33x24xf32>
  %o = "rlx.matmul"(%s, %w2) : (tensor<33x24xf32>, tensor<24x7xf32>) -> tensor<33x7xf32>
  %a = "rlx.add"(%o, %b) : (tensor<33x7xf32>, tensor<7xf32>) -> tensor<33x7xf32>
  %e = "rlx.exp"(%a) : (tensor<33x7xf32>) -> tensor<33x7xf32>
  %m = "rlx.multiply"(%e, %c) : (tensor<33x7xf32>, tensor<f32>) -> tensor<33x7xf32>
  %l = "rlx.sum"(%m) : (tensor<33x7xf32>) -> tensor<f32>
  return %l, %s, %s, %m : tensor<f32>, tensor<33x24xf32>, tensor<33x24xf32>, tensor<33x7xf32>
}
"""
rng = np.random.default_rng(0)
args = [rng.standard_normal(s).astype(np.float32) * 0.3 for s in ((33, 40), (40, 24), (24, 7), (7,))]
module = gradir.parse(text)
gradir.run_pipeline(module, "builtin.module(rlx-gradient{func=main wrt=1,2,3})")
want = gradir.interpret(module, "main_adjoint", *args)


def close(got, ref):
    return all(np.allclose(g, r, rtol=2e-5, atol=1e-6) for g, r in zip(got, ref))


for threads in (1, 2):
    exe = gradir.compile(module, threads=threads, cache=False)
    got = exe["main_adjoint"](*args)
    os.environ["GRADIR_PARALLEL_COMPILE"] = "0"
    whole = gradir.compile(module, threads=threads, cache=False)
    os.environ["GRADIR_PARALLEL_COMPILE"] = "1"
    ref = whole["main_adjoint"](*args)
    # CHECK: threads 1: PartitionedExecutable whole True interpreter True whole True distinct True
    # CHECK: threads 2: PartitionedExecutable whole True interpreter True whole True distinct True
    print(f"threads {threads}: {type(exe).__name__} whole {not hasattr(whole, '_plans')} "
          f"interpreter {close(got, want)} whole {close(got, ref)} "
          f"distinct {got[1] is not got[2] and not np.shares_memory(got[1], got[2])}")
    if threads == 1:
        first = got

# The plan: two parts, the crossing values, the constant cloned (not passed).
plan = exe._plans["main_adjoint"]
# CHECK: parts ['main_adjoint__part0', 'main_adjoint__part1']
print("parts", plan.parts)
print("temps", len(plan.temps), "slots", plan.slots)
# CHECK: llvm_ir whole: True
print("llvm_ir whole:", "main_adjoint__part" not in exe.llvm_ir and "_mlir_ciface_main_adjoint" in exe.llvm_ir)

# export_library: the parts' objects and the C glue, loaded in a fresh process.
lib = exe.export_library(os.path.join(out, "split.so"))
np.savez(os.path.join(out, "args.npz"), *args)
np.savez(os.path.join(out, "want.npz"), *exe["main_adjoint"](*args))
child = f"""
import numpy as np, gradir.runtime as rt
a = np.load({os.path.join(out, 'args.npz')!r}); w = np.load({os.path.join(out, 'want.npz')!r})
got = rt.load({str(lib)!r})["main_adjoint"](*[a[k] for k in sorted(a.files, key=lambda s: int(s[4:]))])
print("exported:", all(np.array_equal(g, w[k]) for g, k in zip(got, sorted(w.files, key=lambda s: int(s[4:])))))
"""
# CHECK: exported: True
print(subprocess.run([sys.executable, "-c", child], capture_output=True, text=True).stdout.strip())

# The compile cache: a split executable is stored (parts + glue linked) and reloaded.
cdir = os.path.join(out, "cache")
miss = gradir.compile(module, threads=1, cache=cdir, functions=["main_adjoint"])
cache_mod.wait()
hit = gradir.compile(module, threads=1, cache=cdir, functions=["main_adjoint"])
# CHECK: cache: PartitionedExecutable False -> CachedExecutable True, same bits True
print(f"cache: {type(miss).__name__} {miss.cache_hit} -> {type(hit).__name__} {hit.cache_hit}, "
      f"same bits {all(np.array_equal(a, b) for a, b in zip(hit['main_adjoint'](*args), first))}")

# Not cut: a result that is an argument, a function another calls, one op.
cases = {
    "returns an argument": """
func.func @f(%x: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %a = "rlx.exp"(%x) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %b = "rlx.tanh"(%a) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %b, %x : tensor<8x8xf32>, tensor<8x8xf32>
}""",
    "called": """
func.func @f(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %a = "rlx.exp"(%x) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %b = "rlx.tanh"(%a) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %b : tensor<8x8xf32>
}
func.func @g(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %a = func.call @f(%x) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %a : tensor<8x8xf32>
}""",
    "no C name": """
func.func @"f.g"(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %a = "rlx.exp"(%x) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %b = "rlx.tanh"(%a) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %b : tensor<8x8xf32>
}""",
    "one op": """
func.func @f(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %a = "rlx.exp"(%x) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %a : tensor<8x8xf32>
}""",
}
x = rng.standard_normal((8, 8)).astype(np.float32)
for name, src in cases.items():
    m = gradir.parse(src)
    f = "f.g" if name == "no C name" else "f"
    e = gradir.compile(m, cache=False, functions=[f])
    ok = close([np.asarray(e[f](x)).reshape(-1)],
               [np.asarray(gradir.interpret(m, f, x)).reshape(-1)]) if name != "returns an argument" \
        else close(e[f](x), gradir.interpret(m, f, x))
    # CHECK: returns an argument: Executable True
    # CHECK: called: Executable True
    # CHECK: no C name: Executable True
    # CHECK: one op: Executable True
    print(f"{name}: {'Partitioned' if hasattr(e, '_plans') else ''}Executable {ok}")

# Two user threads compiling at once (each compile runs its own part threads).
import threading
results = [None, None]


def compile_in_thread(i):
    results[i] = gradir.compile(module, threads=1, cache=False)["main_adjoint"](*args)


workers = [threading.Thread(target=compile_in_thread, args=(i,)) for i in range(2)]
for w in workers:
    w.start()
for w in workers:
    w.join()
# CHECK: two threads: True True
print("two threads:", *(r is not None and all(np.array_equal(a, b) for a, b in zip(r, first))
                         for r in results))

# A refusal inside a function that would be cut is reported once, at its op
# (a dynamic shape between the parts: not cut, the usual path reports it).
bad = gradir.parse("""
func.func @f(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = "rlx.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = "rlx.tanh"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %c = tensor.cast %b : tensor<4xf32> to tensor<?xf32>
  %d = "rlx.exp"(%c) : (tensor<?xf32>) -> tensor<?xf32>
  %e = tensor.cast %d : tensor<?xf32> to tensor<4xf32>
  return %a, %e : tensor<4xf32>, tensor<4xf32>
}""")
try:
    gradir.compile(bad, cache=False)
except CompileError as err:
    # CHECK: refused: <string>:6:8: error: 'rlx.exp' op operand must have a static shape, got tensor<?xf32>
    print("refused:", str(err).splitlines()[0])

# The estimated compile work (partition._WEIGHTS): a matmul reading a
# transposed lhs or rhs in place weighs 10 (the permute_dims itself 0), a
# 2-d transpose no matmul reads 8, elementwise ops and reductions 1.
weighed = gradir.parse("""
func.func @w(%a: tensor<16x8xf32>, %b: tensor<16x8xf32>, %c: tensor<8x16xf32>)
    -> (tensor<8x8xf32>, tensor<16x16xf32>, tensor<8x16xf32>, tensor<f32>) {
  %at = "rlx.permute_dims"(%a) {axes = array<i64: 1, 0>} : (tensor<16x8xf32>) -> tensor<8x16xf32>
  %m1 = "rlx.matmul"(%at, %b) : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  %bt = "rlx.permute_dims"(%b) {axes = array<i64: 1, 0>} : (tensor<16x8xf32>) -> tensor<8x16xf32>
  %m2 = "rlx.matmul"(%a, %bt) : (tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<16x16xf32>
  %ct = "rlx.permute_dims"(%c) {axes = array<i64: 1, 0>} : (tensor<8x16xf32>) -> tensor<16x8xf32>
  %e = "rlx.exp"(%ct) : (tensor<16x8xf32>) -> tensor<16x8xf32>
  %ad = "rlx.add"(%e, %a) : (tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>
  %et = "rlx.permute_dims"(%ad) {axes = array<i64: 1, 0>} : (tensor<16x8xf32>) -> tensor<8x16xf32>
  %s = "rlx.sum"(%e) : (tensor<16x8xf32>) -> tensor<f32>
  return %m1, %m2, %et, %s : tensor<8x8xf32>, tensor<16x16xf32>, tensor<8x16xf32>, tensor<f32>
}""")
from gradir import _compat
body = _compat.block_ops(_compat.block_ops(weighed.body)[0].regions[0].blocks[0])
# CHECK: weights: permute_dims 0, matmul 10, permute_dims 0, matmul 10, permute_dims 8, exp 1, add 1, permute_dims 8, sum 1
print("weights:", ", ".join(f"{op.name[4:]} {partition._weight(op)}" for op in body[:-1]))

# An upstream pass failing in a released run (a part's lowering) reports to
# the caller, not to stderr: the whole-module path reports the error once.
from mlir import ir as _ir
from mlir.passmanager import PassManager
with gradir.make_context():
    broken = _ir.Module.parse("func.func @f() -> i32 {\n %c = arith.constant 1 : i32\n"
                              " return %c : i32\n}")
    block = broken.body.operations[0].regions[0].blocks[0]
    block.operations[1].erase()
    pm = PassManager.parse("builtin.module(canonicalize)")
    pm.enable_verifier(True)
    seen = []
    sys.stderr.flush()
    saved = os.dup(2)
    with open(os.path.join(out, "stderr.txt"), "w") as sink:
        os.dup2(sink.fileno(), 2)
        try:
            passed = _compat.run_pass_manager_released(pm, broken.operation, seen)
        finally:
            os.dup2(saved, 2)
            os.close(saved)
    # CHECK: released failure: False ['empty block: expect at least a terminator'] stderr ''
    print("released failure:", passed, seen, "stderr",
          repr(open(os.path.join(out, "stderr.txt")).read()))

# auto: a small function is not worth a second context; 0: never.  The
# step weighs 70 with its matmuls compiled in (kernels=False), 42 when they
# are kernel calls (the default; partition._KERNEL_MATMUL): split, not split.
os.environ["GRADIR_PARALLEL_COMPILE"] = "auto"
small = gradir.parse(cases["called"])
# CHECK: auto: small False, the step True, with kernels False
print(f"auto: small {hasattr(gradir.compile(small, cache=False, functions=['g']), '_plans')},",
      "the step", hasattr(gradir.compile(module, cache=False, kernels=False), "_plans"),
      end=", ")
print("with kernels", hasattr(gradir.compile(module, cache=False), "_plans"))
os.environ["GRADIR_PARALLEL_COMPILE"] = "0"
# CHECK: off: False
print("off:", hasattr(gradir.compile(module, cache=False), "_plans"))
# CHECK: min weight 48
print("min weight", partition.MIN_WEIGHT)
