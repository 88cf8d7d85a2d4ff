# RUN: rm -rf %t && mkdir -p %t
# RUN: %PYTHON %s %t | FileCheck %s
# issue 14: the LLVM-tools path (gradir/runtime/llvm_tools.py, opt-in with
# GRADIR_LLVM_TOOLS=1): loop nests outlined (loop-extract), opt/llc binaries,
# one process or partitions compiled in parallel (llvm-split), linked and
# loaded like a cache entry; the module reaches opt as LLVM IR translated in
# process, optimized by gradir's pipeline (llvm_tools.PIPELINE) unless
# GRADIR_LLVM_PASSES names another.  Its results equal ExecutionEngine's path and the
# interpreter's, the outlining happened, the compile cache stores its library
# (a second compile hits), and a failing tool is a CompileError.

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np

import gradir
from gradir.conversion.cpu.host import resolve
from gradir.runtime import llvm_tools
from gradir.runtime.jit import ToolchainExecutable
from gradir.runtime.signature import CompileError
from gradir.runtime.toolchain import CompileOptions

out = Path(sys.argv[1])

m = gradir.parse("""
func.func @main(%x: tensor<6x1x8x8xf32>, %w: tensor<4x1x3x3xf32>, %b: tensor<4xf32>,
                %v: tensor<144x5xf32>) -> tensor<f32> {
  %c = "rlx.conv2d"(%x, %w) {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<6x1x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<6x4x6x6xf32>
  %bb = "rlx.reshape"(%b) : (tensor<4xf32>) -> tensor<1x4x1x1xf32>
  %a = "rlx.add"(%c, %bb) : (tensor<6x4x6x6xf32>, tensor<1x4x1x1xf32>) -> tensor<6x4x6x6xf32>
  %r = "rlx.relu"(%a) : (tensor<6x4x6x6xf32>) -> tensor<6x4x6x6xf32>
  %f = "rlx.reshape"(%r) : (tensor<6x4x6x6xf32>) -> tensor<6x144xf32>
  %d = "rlx.matmul"(%f, %v) : (tensor<6x144xf32>, tensor<144x5xf32>) -> tensor<6x5xf32>
  %t = "rlx.tanh"(%d) : (tensor<6x5xf32>) -> tensor<6x5xf32>
  %s = "rlx.mean"(%t) : (tensor<6x5xf32>) -> tensor<f32>
  return %s : tensor<f32>
}""")
gradir.run_pipeline(m, "builtin.module(rlx-gradient{func=main wrt=1,2,3})")
rng = np.random.default_rng(3)
args = [rng.standard_normal(s).astype(np.float32) for s in
        [(6, 1, 8, 8), (4, 1, 3, 3), (4,), (144, 5)]]

print("available:", llvm_tools.available())
# CHECK: available: True
os.environ.pop("GRADIR_LLVM_TOOLS", None)      # auto: large modules only
os.environ["GRADIR_LLVM_JOBS"] = "1"           # partitions one at a time
print("auto, small module:", type(gradir.compile(m, functions="main", cache=False)).__name__)
# CHECK-NEXT: auto, small module: Executable
threshold, llvm_tools.AUTO_MIN_BRANCHES = llvm_tools.AUTO_MIN_BRANCHES, 1
print("auto, above the threshold:", type(gradir.compile(m, functions="main", cache=False)).__name__)
# CHECK-NEXT: auto, above the threshold: ToolchainExecutable
llvm_tools.AUTO_MIN_BRANCHES = threshold
# two partitions at once: the lower threshold (AUTO_MIN_BRANCHES_PARALLEL)
os.environ["GRADIR_LLVM_JOBS"] = "2"
parallel = llvm_tools.AUTO_MIN_BRANCHES_PARALLEL
for least in (10 ** 6, 1):
    llvm_tools.AUTO_MIN_BRANCHES_PARALLEL = least
    print(f"auto, 2 jobs, at least {least}:",
          type(gradir.compile(m, functions="main", cache=False)).__name__)
# CHECK-NEXT: auto, 2 jobs, at least 1000000: Executable
# CHECK-NEXT: auto, 2 jobs, at least 1: ToolchainExecutable
llvm_tools.AUTO_MIN_BRANCHES_PARALLEL = parallel
os.environ["GRADIR_LLVM_TOOLS"] = "0"
print("off:", type(gradir.compile(m, functions="main", cache=False)).__name__)
# CHECK-NEXT: off: Executable

ref = gradir.interpret(m, "main_adjoint", *args)
engine = gradir.compile(m, cache=False)["main_adjoint"](*args)
os.environ["GRADIR_LLVM_TOOLS"] = "1"
for jobs in ("1", "2", "3"):
    os.environ["GRADIR_LLVM_JOBS"] = jobs
    exe = gradir.compile(m, cache=False)
    got = exe["main_adjoint"](*args)
    print(f"jobs={jobs}:", type(exe).__name__, exe.functions,
          "interpreter:", all(np.allclose(g, r, rtol=1e-4, atol=1e-5) for g, r in zip(got, ref)),
          "engine:", all(np.allclose(g, e, rtol=1e-6, atol=1e-7) for g, e in zip(got, engine)),
          "main:", np.allclose(exe["main"](*args), gradir.interpret(m, "main", *args)[0], rtol=1e-5),
          "llvm_ir:", "llvm.func @main_adjoint(" in exe.llvm_ir)
# CHECK-NEXT: jobs=1: ToolchainExecutable ['main', 'main_adjoint'] interpreter: True engine: True main: True llvm_ir: True
# CHECK-NEXT: jobs=2: ToolchainExecutable ['main', 'main_adjoint'] interpreter: True engine: True main: True llvm_ir: True
# CHECK-NEXT: jobs=3: ToolchainExecutable ['main', 'main_adjoint'] interpreter: True engine: True main: True llvm_ir: True

# A named CPU (AVX2 code through -mcpu/-mattr and the functions' attributes).
v3 = gradir.compile(m, cache=False, cpu="x86-64-v3")
print("x86-64-v3:", type(v3).__name__,
      all(np.allclose(g, r, rtol=1e-4, atol=1e-5) for g, r in zip(v3["main_adjoint"](*args), ref)),
      "zmm" not in subprocess.run(["objdump", "-d", str(v3._library.path)], capture_output=True,
                                  text=True).stdout)
# CHECK-NEXT: x86-64-v3: ToolchainExecutable True True

# The loops were outlined: the partitions hold main_adjoint.extracted* functions.
from gradir.runtime.jit import lower
lowered, sigs = lower(m, CompileOptions(), ["main_adjoint"])
with lowered.context:
    from gradir import _compat
    text = _compat.translate_to_llvm_ir(lowered)
print("LLVM IR:", text.count("define ") >= 2, "llvm.func" not in text)
# CHECK-NEXT: LLVM IR: True True
work = out / "parts"
work.mkdir()
lib = llvm_tools.build_library(text, SimpleNamespace(signatures=sigs, options=CompileOptions(),
                                                     llvm_ir=text),
                               2, resolve("host"), work, workers=2)
objs = sorted(p.name for p in work.glob("part*.o"))
syms = subprocess.run(["nm", str(lib)], capture_output=True, text=True).stdout
print("objects:", objs, "outlined:", syms.count("main_adjoint.extracted") > 3,
      "exported:", "_mlir_ciface_main_adjoint" in syms)
# CHECK-NEXT: objects: ['part0.o', 'part1.o'] outlined: True exported: True
print("loads:", np.allclose(gradir.runtime.load(lib)["main_adjoint"](*args)[0], ref[0], rtol=1e-5))
# CHECK-NEXT: loads: True
# The signatures, their digest and the target record are globals of the
# module (no C compiled for them); the memrefCopy shim is linked only when
# the code calls it.
dyn = subprocess.run(["nm", "-D", "--defined-only", str(lib)], capture_output=True, text=True).stdout
print("data:", all(f" R {s}" in dyn for s in ("gradir_signatures", "gradir_signatures_sha256",
                                             "gradir_cpu_target")),
      "shim as needed:", ("memrefCopy" in dyn) == ("@memrefCopy(" in text))
# CHECK-NEXT: data: True shim as needed: True
from gradir.runtime.export import data_llvm_ir
quoted = data_llvm_ir(SimpleNamespace(signatures=sigs, options=CompileOptions()))
print("escaped:", '\\22' in quoted, quoted.count("constant ["))
# CHECK-NEXT: escaped: True 3

# GRADIR_LLVM_PASSES replaces the pipeline (here LLVM's default<O2>, as before).
os.environ["GRADIR_LLVM_PASSES"] = "default<O2>"
print("passes:", llvm_tools.opt_command(Path("opt"), 2, resolve("host"))[1],
      np.allclose(gradir.compile(m, cache=False)["main_adjoint"](*args)[0], ref[0], rtol=1e-5))
# CHECK-NEXT: passes: -passes=loop-extract,default<O2> True
del os.environ["GRADIR_LLVM_PASSES"]
print("pipeline:", llvm_tools.passes(2) == llvm_tools.PIPELINE, llvm_tools.passes(1),
      llvm_tools.passes(2, parallel=False))
# CHECK-NEXT: pipeline: True default<O1> default<O2>

# The compile cache stores the linked library; a second compile hits it.
os.environ["GRADIR_LLVM_JOBS"] = "2"
first = gradir.compile(m, cache=out / "cache")
second = gradir.compile(m, cache=out / "cache")
print("cache:", first.cache_hit, second.cache_hit,
      np.array_equal(first["main_adjoint"](*args)[1], second["main_adjoint"](*args)[1]))
# CHECK-NEXT: cache: False True True

# A tool that fails is a CompileError naming it.
try:
    llvm_tools.build_library("define void @broken(", SimpleNamespace(signatures=sigs,
                             options=CompileOptions(), llvm_ir=""), 2, resolve("host"), out, workers=1)
except CompileError as err:
    print("CompileError:", str(err).splitlines()[0][:10])
# CHECK-NEXT: CompileError: opt failed
# A failing tools path falls back to ExecutionEngine with a warning.
import warnings
real, llvm_tools.build_library = llvm_tools.build_library, lambda *a, **k: (_ for _ in ()).throw(
    CompileError("opt failed (simulated)"))
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    fallback = gradir.compile(m, cache=False)
llvm_tools.build_library = real
print("fallback:", type(fallback).__name__,
      [str(w.message)[:40] for w in caught if w.category is RuntimeWarning],
      np.allclose(fallback["main_adjoint"](*args)[0], ref[0], rtol=1e-5))
# CHECK-NEXT: fallback: Executable ['gradir: the LLVM tools path failed, comp'] True
os.environ["GRADIR_LLVM_JOBS"] = "x"
try:
    gradir.compile(m, cache=False)
except CompileError as err:
    print("CompileError:", err)
# CHECK-NEXT: CompileError: GRADIR_LLVM_JOBS must be an integer, not 'x'
