# RUN: rm -rf %t && mkdir -p %t
# RUN: %PYTHON %s %t | FileCheck %s
# issue 14 (compile time): the parts of a split program (runtime/partition.py)
# through LLVM's tool binaries (llvm_tools.part_object: loop nests outlined,
# opt | llc), each part in its own thread, every part's object linked with the
# C glue into one library (jit.PartitionedToolchainExecutable).  A large
# program compiled in parts by ExecutionEngine took 2x the time of the whole
# module through the tools (torchvision's shufflenet_v2_x0_5 step: LLVM's
# loop passes on one huge function per part).  "auto" sends a part there when
# its LLVM IR has partition.TOOLS_MIN_BLOCKS basic blocks or more and its
# estimated work TOOLS_MIN_WEIGHT (both lowered here so that a small
# program's parts count as large).  The results are
# bitwise those of the parts compiled by ExecutionEngine, and close to the
# interpreter's and the whole module's; a part below the threshold still goes
# to ExecutionEngine (its object dumped and linked with the others); two
# partitions per part (llvm-split) link without clashing names; run-time
# checks report from either part; export_library, the compile cache and
# GRADIR_LLVM_TOOLS=0 work; code for a CPU this machine lacks features of is
# compiled and exported but refuses to run; a failing tool falls back to the
# whole module.

import os
import subprocess
import sys

import numpy as np

import gradir
from gradir.runtime import ExecutionError
from gradir.runtime import cache as cache_mod
from gradir.runtime import llvm_tools, partition
from gradir.runtime.signature import CompileError

out = sys.argv[1]
for var in ("GRADIR_PARALLEL_COMPILE", "GRADIR_LLVM_TOOLS", "GRADIR_LLVM_JOBS"):
    os.environ.pop(var, None)       # the defaults: auto, auto, the usable CPUs (at most 4)
# CHECK: default threshold 1200 blocks, weight 100
print("default threshold", partition.TOOLS_MIN_BLOCKS, "blocks, weight", partition.TOOLS_MIN_WEIGHT)
partition.TOOLS_MIN_BLOCKS = 1

# matmuls first and a take of computed indices last: a step cut in two parts
# (auto: it weighs MIN_WEIGHT or more), a run-time check in the second part
text = """
func.func @main(%x: tensor<33x40xf32>, %w1: tensor<40x24xf32>, %w2: tensor<24x7xf32>,
                %b: tensor<7xf32>, %i: tensor<5xi32>) -> tensor<f32> {
  %c = arith.constant dense<[0.5, 0.25, 2.0, 1.0, 0.75, 1.5, 0.125]> : tensor<7xf32>
  %h = "rlx.matmul"(%x, %w1) : (tensor<33x40xf32>, tensor<40x24xf32>) -> tensor<33x24xf32>
  %t = "rlx.tanh"(%h) : (tensor<33x24xf32>) -> tensor<33x24xf32>
  %w1t = "rlx.permute_dims"(%w1) {axes = array<i64: 1, 0>} : (tensor<40x24xf32>) -> tensor<24x40xf32>
  %h2 = "rlx.matmul"(%t, %w1t) : (tensor<33x24xf32>, tensor<24x40xf32>) -> tensor<33x40xf32>
  %t2 = "rlx.tanh"(%h2) : (tensor<33x40xf32>) -> tensor<33x40xf32>
  %h3 = "rlx.matmul"(%t2, %w1) : (tensor<33x40xf32>, tensor<40x24xf32>) -> tensor<33x24xf32>
  %o = "rlx.matmul"(%h3, %w2) : (tensor<33x24xf32>, tensor<24x7xf32>) -> tensor<33x7xf32>
  %a = "rlx.add"(%o, %b) : (tensor<33x7xf32>, tensor<7xf32>) -> tensor<33x7xf32>
  %m = "rlx.multiply"(%a, %c) : (tensor<33x7xf32>, tensor<7xf32>) -> tensor<33x7xf32>
  %e = "rlx.exp"(%m) : (tensor<33x7xf32>) -> tensor<33x7xf32>
  %k = "rlx.take"(%e, %i) {axis = array<i64: 0>} : (tensor<33x7xf32>, tensor<5xi32>) -> tensor<5x7xf32>
  %r = "rlx.multiply"(%k, %c) : (tensor<5x7xf32>, tensor<7xf32>) -> tensor<5x7xf32>
  %l = "rlx.sum"(%r) : (tensor<5x7xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
"""
rng = np.random.default_rng(0)
args = [rng.standard_normal(s).astype(np.float32) * 0.2 for s in ((33, 40), (40, 24), (24, 7), (7,))]
args.append(np.array([0, 3, 32, -1, 7], dtype=np.int32))
module = gradir.parse(text)
gradir.run_pipeline(module, "builtin.module(rlx-gradient{func=main wrt=1,2,3})")
want = gradir.interpret(module, "main_adjoint", *args)


def close(got, ref):
    return all(np.allclose(g, r, rtol=1e-4, atol=1e-5 * np.abs(r).max()) for g, r in zip(got, ref))


def same(got, ref):
    return all(np.array_equal(g, r) for g, r in zip(got, ref))


def compile_with(env: dict, **kwargs):
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        return gradir.compile(module, cache=False, **kwargs)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


blocks = []
real_part_module = llvm_tools.PartModule.__init__


def counting(self, op):
    real_part_module(self, op)
    blocks.append(self.blocks)


llvm_tools.PartModule.__init__ = counting
# A part lighter than partition.TOOLS_MIN_WEIGHT is not even translated to
# count its blocks (this step's parts weigh less): ExecutionEngine's parts.
light = gradir.compile(module, threads=1, cache=False)
# CHECK: light: PartitionedExecutable translated 0
print("light:", type(light).__name__, "translated", len(blocks))
partition.TOOLS_MIN_WEIGHT = 0
for threads in (1, 2):
    blocks.clear()
    exe = gradir.compile(module, threads=threads, cache=False)     # auto, all defaults
    got = exe["main_adjoint"](*args)
    ee = compile_with({"GRADIR_LLVM_TOOLS": "0"}, threads=threads)
    whole = compile_with({"GRADIR_PARALLEL_COMPILE": "0"}, threads=threads)
    # CHECK: threads 1: PartitionedToolchainExecutable parts 2 ee PartitionedExecutable bits True interpreter True whole True main True
    # CHECK: threads 2: PartitionedToolchainExecutable parts 2 ee PartitionedExecutable bits True interpreter True whole True main True
    print(f"threads {threads}: {type(exe).__name__} parts {len(exe._plans['main_adjoint'].parts)} "
          f"ee {type(ee).__name__} bits {same(got, ee['main_adjoint'](*args))} "
          f"interpreter {close(got, want)} whole {close(got, whole['main_adjoint'](*args))} "
          f"main {np.array_equal(exe['main'](*args), ee['main'](*args))}")
    if threads == 1:
        first, unit_blocks = got, sorted(blocks)

# The loop nests were outlined (the parts' extracted functions, local
# symbols of the library) and the library holds the C glue of the unsplit ABI.
syms = subprocess.run(["nm", str(exe._library.path)], capture_output=True, text=True).stdout
# CHECK: outlined True glue True
print("outlined", ".extracted" in syms, "glue", " T _mlir_ciface_main_adjoint\n" in syms)

# Two partitions per part (GRADIR_LLVM_JOBS=4 over two parts: llvm-split):
# the helpers each part's partitions share become hidden globals of the same
# names in both parts (gradir_check_fail, llvm-split's unnamed constants),
# made local so that the parts link into one library.
jobs4 = compile_with({"GRADIR_LLVM_JOBS": "4"}, threads=1)
# CHECK: llvm-split: PartitionedToolchainExecutable True
print("llvm-split:", type(jobs4).__name__, same(jobs4["main_adjoint"](*args), first))

# A part below the threshold goes to ExecutionEngine; its object is linked
# with the other part's.
print("parts' blocks:", unit_blocks)
partition.TOOLS_MIN_BLOCKS = unit_blocks[1]
mixed = compile_with({}, threads=1)
# CHECK: mixed: PartitionedToolchainExecutable True
print("mixed:", type(mixed).__name__, same(mixed["main_adjoint"](*args), first))
# Every part below it: the parts' engines, as before.
partition.TOOLS_MIN_BLOCKS = unit_blocks[1] + 1
# CHECK: below: PartitionedExecutable True
below = compile_with({}, threads=1)
print("below:", type(below).__name__, same(below["main_adjoint"](*args), first))
partition.TOOLS_MIN_BLOCKS = 1

# A run-time check in a part reports through the library's hook.
bad = list(args)
bad[4] = np.array([0, 3, 33, -1, 7], dtype=np.int32)
try:
    exe["main_adjoint"](*bad)
    print("no error")
except ExecutionError as err:
    # CHECK: check: 'rlx.take' op index out of range [-33, 33) on axis 0, got 33
    print("check:", str(err).split(": ", 2)[-1].splitlines()[0])

# export_library copies the linked library; a fresh process loads it.
lib = exe.export_library(os.path.join(out, "split.so"))
np.savez(os.path.join(out, "args.npz"), *args)
np.savez(os.path.join(out, "want.npz"), *exe["main_adjoint"](*args))
child = f"""
import numpy as np, gradir.runtime as rt
a = np.load({os.path.join(out, 'args.npz')!r}); w = np.load({os.path.join(out, 'want.npz')!r})
order = lambda f: sorted(f.files, key=lambda s: int(s[4:]))
got = rt.load({str(lib)!r})["main_adjoint"](*[a[k] for k in order(a)])
print("exported:", all(np.array_equal(g, w[k]) for g, k in zip(got, order(w))))
"""
# CHECK: exported: True
print(subprocess.run([sys.executable, "-c", child], capture_output=True, text=True).stdout.strip())
# CHECK: llvm_ir whole: True
print("llvm_ir whole:", "main_adjoint__part" not in exe.llvm_ir
      and "_mlir_ciface_main_adjoint" in exe.llvm_ir)

# The compile cache stores the library as it is; a second compile loads it.
cdir = os.path.join(out, "cache")
miss = gradir.compile(module, threads=1, cache=cdir)
cache_mod.wait()
hit = gradir.compile(module, threads=1, cache=cdir)
# CHECK: cache: PartitionedToolchainExecutable False -> CachedExecutable True, same bits True
print(f"cache: {type(miss).__name__} {miss.cache_hit} -> {type(hit).__name__} {hit.cache_hit}, "
      f"same bits {same(hit['main_adjoint'](*args), first)}")

# Code for a CPU whose features this machine lacks (here: a machine said to
# have none beyond x86-64): compiled, its functions refuse to run, its
# library is exported.
from gradir.conversion.cpu import host as host_mod  # noqa: E402
from gradir.runtime import target_check  # noqa: E402
from gradir.runtime.errors import TargetMismatchError  # noqa: E402
plain = host_mod.parse_cpuinfo("model name : plain\nflags : fpu sse sse2\n", "x86_64")
real_detect = host_mod.detect_host, target_check.detect_host
host_mod.detect_host = target_check.detect_host = lambda: plain
try:
    v4 = gradir.compile(module, threads=1, cache=False, cpu="x86-64-v4")
    try:
        v4["main_adjoint"]
        print("ran (wrong)")
    except TargetMismatchError as err:
        print("foreign cpu:", type(v4).__name__, str(err).split(" needs")[0])
    print("exported:", os.path.basename(v4.export_library(os.path.join(out, "v4.so"))))
    # (the whole module through the tools: the same; it raised from compile)
    whole_v4 = compile_with({"GRADIR_PARALLEL_COMPILE": "0", "GRADIR_LLVM_TOOLS": "1"},
                            threads=1, cpu="x86-64-v4")
    try:
        whole_v4["main_adjoint"]
        print("ran (wrong)")
    except TargetMismatchError:
        print("whole:", type(whole_v4).__name__, "refused, exported:",
              os.path.basename(whole_v4.export_library(os.path.join(out, "v4w.so"))))
finally:
    host_mod.detect_host, target_check.detect_host = real_detect
# CHECK: foreign cpu: PartitionedToolchainExecutable the code was compiled for cpu x86-64-v4 and
# CHECK-NEXT: exported: v4.so
# CHECK-NEXT: whole: ToolchainExecutable refused, exported: v4w.so

# A tool failing in a part: the whole module is compiled the usual way.
real_part_object = llvm_tools.part_object


def broken(*a, **k):
    raise CompileError("opt failed (simulated)")


llvm_tools.part_object = broken
fallback = compile_with({}, threads=1)
llvm_tools.part_object = real_part_object
# CHECK: fallback: whole True CompileError: opt failed (simulated)
print("fallback:", "whole" if not hasattr(fallback, "_plans") else "split",
      close(fallback["main_adjoint"](*args), want), partition.last_error)
# A bad GRADIR_LLVM_JOBS is an error, as on the whole module's path.
try:
    compile_with({"GRADIR_LLVM_JOBS": "x"}, threads=1)
except CompileError as err:
    # CHECK: GRADIR_LLVM_JOBS must be an integer, not 'x'
    print(err)
