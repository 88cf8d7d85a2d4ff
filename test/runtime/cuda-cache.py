# RUN: rm -rf %t && mkdir -p %t
# RUN: %PYTHON %s %t | FileCheck %s
# The persistent compile cache for target "cuda" (gradir/runtime/cuda_cache.py),
# run without a GPU on the fake CUDA driver (test/conversion/gpu/Inputs/
# fake_cuda.c: kernel launches run by gradir's SIMT emulator): a miss writes
# the exported library as the entry and runs it, a hit loads it without
# lowering or starting an ExecutionEngine, and both give bitwise the fresh
# compile's results (and a float64 numpy step's), with the same functions,
# signatures, resident arguments and upload functions; another chip,
# precision, compute_dtype, sm_count, binary format or lowering switch is
# another entry; damaged or foreign entries are discarded with a warning and
# rebuilt (also one damaged between the compile and the first call);
# cache=False and GRADIR_CACHE=0 bypass the cache; without a driver a hit's
# first call raises what a fresh compile's does; clear() and the size cap
# count CUDA entries (a miss whose entry is evicted runs its own code).

import os
import re
import subprocess
import sys
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "test", "conversion", "gpu", "Inputs"))
sys.path.insert(0, os.path.join(ROOT, "examples"))

from emulate_helpers import outlined_kernels  # noqa: E402
from fake_driver import FakeDriver, build  # noqa: E402
from mlp import build_mlp, differentiate, init_params, numpy_step  # noqa: E402

import gradir  # noqa: E402
from gradir import _compat  # noqa: E402
from gradir.conversion.gpu import nvvm  # noqa: E402
from gradir.conversion.gpu.kernels import wgmma  # noqa: E402
from gradir.runtime import cache, cuda_cache  # noqa: E402
from gradir.runtime.abi import signatures_to_json  # noqa: E402
from gradir.runtime.cuda import CudaExecutable  # noqa: E402

out = sys.argv[1]
CACHE = os.path.join(out, "cache")
RESIDENT = (2, 3, 4, 5)
BATCH, SIZES = 24, [40, 20, 6]
module = differentiate(build_mlp(BATCH, SIZES))

# The kernels as every executable's pipeline outlines them, run by the emulator.
kernels, _ = outlined_kernels(module, keep_resident=RESIDENT)
driver = FakeDriver(build(out))   # loaded first: the process's libcuda.so.1
driver.emulate(kernels.operation)

rng = np.random.default_rng(0)
x = rng.standard_normal((BATCH, SIZES[0])).astype(np.float32)
labels = rng.integers(0, SIZES[-1], BATCH)
p1, p2 = init_params(SIZES, seed=1), init_params(SIZES, seed=2)


def entries():
    found = []
    for folder, _, names in os.walk(os.path.join(CACHE, "compiled")):
        found += [os.path.join(folder, n) for n in names
                  if n.endswith(".so") and not n.startswith("lib")]
    return sorted(found)


def compile_(**kwargs):
    kwargs.setdefault("keep_resident", RESIDENT)
    kwargs.setdefault("cache", CACHE)
    before = dict(vars(cache.stats))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exe = gradir.compile(module, target="cuda", **kwargs)
    delta = {k: v - before[k] for k, v in vars(cache.stats).items() if v != before[k]}
    for w in caught:
        if w.category is cache.CacheWarning:
            print("  warning:", str(w.message).split(";")[0].replace(out, "<out>"))
    return exe, delta


def run(exe):
    """Every function of the MLP step, in the order that shows the resident
    arguments: kept from the first call, replaced by the upload function."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        step = exe["main_adjoint"]
        got = [step(x, labels, *p1), step(x, labels, *p2)]
        exe["main_adjoint_upload_resident"](*p2)
        got += [step(x, labels, *p1), exe["main"](x, labels, *p1)]
    for w in caught:
        if w.category is cache.CacheWarning:
            print("  warning:", str(w.message).replace(out, "<out>"))
    return [np.asarray(a) for r in got for a in r]


def describe(exe):
    return (f"{type(exe).__name__} hit={exe.cache_hit} functions={exe.functions} "
            f"resident={exe.resident}")


print("TEST: fresh, miss and hit")
fresh, delta = compile_(cache=False)
print("fresh:", describe(fresh), delta)
# CHECK-LABEL: TEST: fresh, miss and hit
# CHECK-NEXT: fresh: CudaExecutable hit=None functions=['main', 'main_adjoint', 'main_upload_resident', 'main_adjoint_upload_resident'] resident={'main': (2, 3, 4, 5), 'main_adjoint': (2, 3, 4, 5)} {}
want = run(fresh)
ref = numpy_step(x, labels, *p1)
ref2 = numpy_step(x, labels, *p2)
close = all(np.abs(g - w).max() < 1e-4 for g, w in zip(want, [*ref, *ref, *ref2, *ref[:2]]))
print("fresh against numpy:", close, "launch errors:", driver.errors)
# CHECK-NEXT: fresh against numpy: True launch errors: []

miss, delta = compile_()
print("miss:", describe(miss), delta, "entries:", len(entries()))
# CHECK-NEXT: miss: CachedCudaExecutable hit=False functions=['main', 'main_adjoint', 'main_upload_resident', 'main_adjoint_upload_resident'] resident={'main': (2, 3, 4, 5), 'main_adjoint': (2, 3, 4, 5)} {'misses': 1, 'writes': 1} entries: 1
print("miss like fresh:", all(np.array_equal(a, b) for a, b in zip(run(miss), want)))
# CHECK-NEXT: miss like fresh: True

# A hit neither lowers nor starts an ExecutionEngine (its first call loads the entry).
saved = (nvvm.lower_to_nvvm, _compat.execution_engine, cuda_cache.compile_cuda)


def refuse(*args, **kwargs):
    raise AssertionError("lowering or LLVM invoked on a compile-cache hit")


nvvm.lower_to_nvvm = _compat.execution_engine = cuda_cache.compile_cuda = refuse
hit, delta = compile_()
loads = driver.stat("module load")
got = run(hit)
nvvm.lower_to_nvvm, _compat.execution_engine, cuda_cache.compile_cuda = saved
print("hit:", describe(hit), delta, "path:", hit.cache_path == miss.cache_path)
print("hit like fresh:", all(np.array_equal(a, b) for a, b in zip(got, want)),
      "| same signatures:", signatures_to_json(hit.signatures) == signatures_to_json(fresh.signatures),
      "| kernel images loaded:", driver.stat("module load") - loads,
      "| a CudaExecutable:", isinstance(hit, CudaExecutable), "| format:", hit.format == fresh.format)
# CHECK-NEXT: hit: CachedCudaExecutable hit=True functions=['main', 'main_adjoint', 'main_upload_resident', 'main_adjoint_upload_resident'] resident={'main': (2, 3, 4, 5), 'main_adjoint': (2, 3, 4, 5)} {'hits': 1} path: True
# CHECK-NEXT: hit like fresh: True | same signatures: True | kernel images loaded: 2 | a CudaExecutable: True | format: True

# export_library copies the entry and its runtime; llvm_ir and kernels() lower again
# (the same text but for the compile times gpu-module-to-binary records).


def timeless(text):
    return re.sub(r"properties = \{[^}]*\}", "", text)


lib = gradir.runtime.load(hit.export_library(os.path.join(out, "export", "mlp.so")))
print("exported:", lib.functions, sorted(os.listdir(os.path.join(out, "export"))))
print("exported like fresh:",
      all(np.array_equal(a, b) for a, b in zip(run(lib), want)),
      "| llvm_ir:", timeless(hit.llvm_ir) == timeless(fresh.llvm_ir), "| kernels:", hit.kernels() == fresh.kernels())
# CHECK-NEXT: exported: ['main', 'main_adjoint', 'main_upload_resident', 'main_adjoint_upload_resident'] ['libmlir_cuda_runtime.so', 'mlp.so']
# CHECK-NEXT: exported like fresh: True | llvm_ir: True | kernels: True

print("TEST: what changes the code is another entry")
variants = [dict(chip="sm_80"), dict(precision="tf32"), dict(compute_dtype="bf16"),
            dict(sm_count=64), dict(keep_resident=(2, 3)), dict(opt_level=2),
            dict(functions=["main_adjoint"])]
for kwargs in variants:
    exe, delta = compile_(**kwargs)
    print(" ", kwargs, "hit:", exe.cache_hit, delta)
exe, delta = compile_(precision="high")
print("  precision high (tf32's alias): hit:", exe.cache_hit, delta)
wgmma.DYNAMIC_SMEM = True
exe, delta = compile_(precision="tf32")
print("  wgmma.DYNAMIC_SMEM: hit:", exe.cache_hit, delta)
wgmma.DYNAMIC_SMEM = False
exe, delta = compile_(chip="sm_80")
print("  sm_80 again: hit:", exe.cache_hit, delta, "| entries:", len(entries()))
# CHECK-LABEL: TEST: what changes the code is another entry
# CHECK-NEXT: {'chip': 'sm_80'} hit: False {'misses': 1, 'writes': 1}
# CHECK-NEXT: {'precision': 'tf32'} hit: False {'misses': 1, 'writes': 1}
# CHECK-NEXT: {'compute_dtype': 'bf16'} hit: False {'misses': 1, 'writes': 1}
# CHECK-NEXT: {'sm_count': 64} hit: False {'misses': 1, 'writes': 1}
# CHECK-NEXT: {'keep_resident': (2, 3)} hit: False {'misses': 1, 'writes': 1}
# CHECK-NEXT: {'opt_level': 2} hit: False {'misses': 1, 'writes': 1}
# CHECK-NEXT: {'functions': ['main_adjoint']} hit: False {'misses': 1, 'writes': 1}
# CHECK-NEXT: precision high (tf32's alias): hit: True {'hits': 1}
# CHECK-NEXT: wgmma.DYNAMIC_SMEM: hit: False {'misses': 1, 'writes': 1}
# CHECK-NEXT: sm_80 again: hit: True {'hits': 1} | entries: 9

# The binary format and the ptxas version are part of the key (compile_cached's
# format; gradir.compile takes a cubin when ptxas is found, else PTX).
from gradir.runtime.toolchain import CompileOptions  # noqa: E402
options = CompileOptions("cuda", 3, "sm_90", RESIDENT)
before = cache.stats.misses, cache.stats.corrupt
isa = cuda_cache.compile_cached(module, options, os.path.join(CACHE, "compiled"), format="isa")
print("  format isa:", isa.cache_hit, isa.format, "| misses, corrupt:",
      (cache.stats.misses - before[0], cache.stats.corrupt - before[1]),
      "| no tool in PTX's key:", cuda_cache.tool_versions("isa") == {})
# CHECK-NEXT: format isa: False isa | misses, corrupt: (1, 0) | no tool in PTX's key: True
# The GPU lowering's switches are in the key: wgmma.TMA, and gemm.GEMM_CONFIGS,
# whose source assigns it over two lines.
from gradir.conversion.gpu.kernels import gemm  # noqa: E402
key = cache.cache_key("module", options)
wgmma.TMA = True
tma = cache.cache_key("module", options)
wgmma.TMA = False
tiles, gemm.GEMM_CONFIGS = gemm.GEMM_CONFIGS, ((64, 64, 16, 4, 4),)
configs = cache.cache_key("module", options)
gemm.GEMM_CONFIGS = tiles
print("  switches: TMA", tma != key, "| GEMM_CONFIGS", configs != key,
      "| restored", cache.cache_key("module", options) == key, cache._switches())
# CHECK-NEXT: switches: TMA True | GEMM_CONFIGS True | restored True []
saved = dict(cuda_cache._versions)
cuda_cache._versions.update({k: "ptxas: another release" for k in saved})
exe, delta = compile_()
cuda_cache._versions.update(saved)
print("  another ptxas: hit:", exe.cache_hit, delta, "| memoized:", len(saved))
# CHECK-NEXT: another ptxas: hit: False {'misses': 1, 'writes': 1} | memoized: 1
os.environ["GRADIR_CUDA_RUNTIME"] = "mlir"
exe, delta = compile_()
del os.environ["GRADIR_CUDA_RUNTIME"]
print("  MLIR's runtime: hit:", exe.cache_hit, delta, "| folder:",
      exe.cache_path.parent.name.split("-")[:2], sorted(os.listdir(exe.cache_path.parent))[-4:])
# CHECK-NEXT: MLIR's runtime: hit: False {'misses': 1, 'writes': 1} | folder: ['cuda', 'mlir'] ['libLLVM.so', 'libLLVM.so.sha256', 'libmlir_cuda_runtime.so', 'libmlir_cuda_runtime.so.sha256']
exe, delta = compile_()
print("  gradir's runtime again: hit:", exe.cache_hit, delta, "| entries:", len(entries()))
# CHECK-NEXT: gradir's runtime again: hit: True {'hits': 1} | entries: 12

print("TEST: damaged entries are rebuilt")
path = miss.cache_path
data = path.read_bytes()
path.write_bytes(data[: len(data) // 2])
exe, delta = compile_()
print("truncated:", exe.cache_hit, delta)
# CHECK-LABEL: TEST: damaged entries are rebuilt
# CHECK-NEXT: warning: gradir compile cache: <out>/cache/compiled/cuda-{{.*}}.so is truncated or corrupt (no trailer)
# CHECK-NEXT: truncated: False {'misses': 1, 'writes': 1, 'corrupt': 1}
flipped = bytearray(path.read_bytes())
flipped[len(flipped) // 3] ^= 0xFF
path.write_bytes(bytes(flipped))
exe, delta = compile_()
print("flipped:", exe.cache_hit, delta)
# CHECK-NEXT: warning: {{.*}} is truncated or corrupt (its digest does not match)
# CHECK-NEXT: flipped: False {'misses': 1, 'writes': 1, 'corrupt': 1}
sm80 = [e for e in entries() if e != str(path)][0]
path.write_bytes(open(sm80, "rb").read())          # another program's whole entry
exe, delta = compile_()
print("foreign:", exe.cache_hit, delta)
# CHECK-NEXT: warning: {{.*}} was compiled from another program (its key is {{.*}}
# CHECK-NEXT: foreign: False {'misses': 1, 'writes': 1, 'corrupt': 1}
runtime = path.parent / "libmlir_cuda_runtime.so"
# (a new file renamed over it: the process may have the old one mapped)
(path.parent / "damaged").write_bytes(runtime.read_bytes()[:4096])
os.replace(path.parent / "damaged", runtime)
exe, delta = compile_()
print("runtime truncated:", exe.cache_hit, delta)
# CHECK-NEXT: warning: {{.*}}libmlir_cuda_runtime.so does not match its record (truncated or edited)
# CHECK-NEXT: runtime truncated: False {'misses': 1, 'writes': 1, 'corrupt': 1}
exe, delta = compile_()
print("rebuilt:", exe.cache_hit, delta,
      "like fresh:", all(np.array_equal(a, b) for a, b in zip(run(exe), want)))
# CHECK-NEXT: rebuilt: True {'hits': 1} like fresh: True

# Damaged after the compile, before the first call: that call compiles again.
exe, _ = compile_()
path.write_bytes(data[:1000])
got = run(exe)
print("damaged before the call: like fresh:", all(np.array_equal(a, b) for a, b in zip(got, want)),
      "| launch errors:", driver.errors)
# CHECK-NEXT: warning: gradir compile cache: <out>/cache/compiled/cuda-{{.*}}.so cannot be loaded (is truncated or corrupt (no trailer)); compiling again
# CHECK-NEXT: damaged before the call: like fresh: True | launch errors: []
exe, delta = compile_()
print("next compile:", exe.cache_hit, delta)
# CHECK-NEXT: warning: {{.*}} is truncated or corrupt (no trailer)
# CHECK-NEXT: next compile: False {'misses': 1, 'writes': 1, 'corrupt': 1}

print("TEST: off switches")
n = len(entries())
exe, delta = compile_(cache=False, sm_count=32)
print("cache=False:", type(exe).__name__, exe.cache_hit, delta)
exe, delta = compile_(cache=None, sm_count=32)
print("GRADIR_CACHE =", os.environ.get("GRADIR_CACHE"), type(exe).__name__, exe.cache_hit, delta)
print("new entries:", len(entries()) - n)
# CHECK-LABEL: TEST: off switches
# CHECK-NEXT: cache=False: CudaExecutable None {}
# CHECK-NEXT: GRADIR_CACHE = 0 CudaExecutable None {}
# CHECK-NEXT: new entries: 0

print("TEST: no driver")
# A process without the fake driver: a hit's first call raises the fresh compile's error.
CHILD = r"""
import sys
sys.path.insert(0, sys.argv[2])
import gradir
from mlp import build_mlp, differentiate
module = differentiate(build_mlp(24, [40, 20, 6]))
for cache in (False, sys.argv[1], sys.argv[1]):     # fresh, then (written if need be) a hit
    exe = gradir.compile(module, target="cuda", keep_resident=(2, 3, 4, 5), cache=cache)
    try:
        exe["main"](*[__import__("numpy").zeros(s.shape, s.dtype) for s in exe["main"].signature.inputs])
        print(exe.cache_hit, "ran")
    except RuntimeError as err:
        print(exe.cache_hit, type(err).__name__, str(err))
"""
child = subprocess.run([sys.executable, "-c", CHILD, CACHE, os.path.join(ROOT, "examples")],
                       capture_output=True, text=True)
lines = [line.split(" ", 1) for line in child.stdout.splitlines()]
print(lines[0][0], lines[-1][0], "| same error:",
      lines[0][1] == lines[-1][1] if len(lines) == 3 else child.stderr)
print(lines[-1][1].split(":")[0])
# CHECK-LABEL: TEST: no driver
# CHECK-NEXT: None True | same error: True
# CHECK-NEXT: RuntimeError cannot start the CUDA runtime (libmlir_cuda_runtime.so)

print("TEST: clear and size cap")
n = len(entries())
print("cleared:", cache.clear(CACHE) == n, n > 0, "left:", len(entries()))
# CHECK-LABEL: TEST: clear and size cap
# CHECK-NEXT: cleared: True True left: 0
# An entry evicted at once (a tiny cap): the miss runs the code compiled here.
os.environ["GRADIR_CACHE_MAX_MB"] = "0.000001"
exe, delta = compile_()
del os.environ["GRADIR_CACHE_MAX_MB"]
print("capped:", exe.cache_hit, delta, "entries:", len(entries()))
print("capped runs like fresh:", all(np.array_equal(a, b) for a, b in zip(run(exe), want)),
      "| launch errors:", driver.errors)
# CHECK-NEXT: capped: False {'misses': 1, 'writes': 1} entries: 0
# CHECK-NEXT: warning: gradir compile cache: <out>/cache/compiled/cuda-{{.*}}.so cannot be loaded ([Errno 2] No such file or directory{{.*}}); running the code compiled here
# CHECK-NEXT: capped runs like fresh: True | launch errors: []
