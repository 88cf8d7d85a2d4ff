"""Thread runtimes for gradir's parallel loops, side by side: LLVM's OpenMP
runtime (what gradir uses) against MLIR's async runtime, and one thread.

    build/venv/bin/python bench/cpu_runtimes.py

One kernel, y = exp(x) over rows of 64 floats, as an scf.parallel over the
rows, lowered three ways in one process pinned to the first two cores:
  * seq:    scf.parallel -> scf.for (rlx-parallel-loops{threads=1});
  * openmp: rlx-parallel-loops{threads=2} (convert-scf-to-openmp, guided
    schedule) + convert-openmp-to-llvm, calling libomp.so (cmeel-libomp)
    with gradir's defaults (runtime/openmp.py: KMP_BLOCKTIME=0 unless the
    environment sets it; `KMP_BLOCKTIME=200 python bench/cpu_runtimes.py`
    measures libomp's own default);
  * async:  async-parallel-for{num-workers=2} + async-to-async-runtime +
    convert-async-to-llvm, calling libmlir_async_runtime.so (which needs
    libLLVM.so: an exported library would have to ship it).
Sizes from 2K to 1M elements: the small ones show the fork/join overhead.
Median of repeated calls, interleaved; ratios are seq time / parallel time.
"""

from __future__ import annotations

import ctypes
import os
import platform
import statistics
import sys
import time

import _cli  # bench/_cli.py: --help, unknown options

KERNEL = """
func.func @k(%a: memref<?xf32>, %b: memref<?xf32>) attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  %rows = arith.divui %n, %c64 : index
  scf.parallel (%r) = (%c0) to (%rows) step (%c1) {
    %base = arith.muli %r, %c64 : index
    scf.for %j = %c0 to %c64 step %c1 {
      %i = arith.addi %base, %j : index
      %x = memref.load %a[%i] : memref<?xf32>
      %y = math.exp %x : f32
      memref.store %y, %b[%i] : memref<?xf32>
    }
    scf.reduce
  }
  return
}
"""

TAIL = ("convert-scf-to-cf,convert-math-to-llvm,finalize-memref-to-llvm,convert-arith-to-llvm,"
        "convert-index-to-llvm,convert-cf-to-llvm,convert-func-to-llvm,"
        "reconcile-unrealized-casts")

PIPELINES = {
    "seq": f"builtin.module(rlx-parallel-loops{{threads=1}},{TAIL})",
    "openmp": f"builtin.module(rlx-parallel-loops{{threads=2 min-work=0}},convert-scf-to-cf,"
              f"convert-openmp-to-llvm,{TAIL})",
    "async": f"builtin.module(async-parallel-for{{num-workers=2}},async-to-async-runtime,"
             f"async-runtime-ref-counting,async-runtime-ref-counting-opt,convert-async-to-llvm,"
             f"{TAIL})",
}


def main() -> int:
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:2])
    import numpy as np
    from mlir import ir
    from mlir.execution_engine import ExecutionEngine
    from mlir.runtime import get_ranked_memref_descriptor

    import gradir
    from gradir.conversion.cpu.host import detect_host
    from gradir.passes.pipeline import build_pass_manager
    from gradir.runtime.toolchain import openmp_library, runtime_library_dir

    from gradir.runtime.openmp import configure
    host = detect_host()
    configure(ctypes.CDLL(str(openmp_library())))
    libs = {"seq": [], "openmp": [str(openmp_library())],
            "async": [str(runtime_library_dir() / "libmlir_async_runtime.so")]}
    engines = {}
    ctx = gradir.make_context()
    with ctx, ir.Location.unknown():
        for name, pipeline in PIPELINES.items():
            module = ir.Module.parse(KERNEL)
            build_pass_manager(pipeline, ctx).run(module.operation)
            engines[name] = ExecutionEngine(module, opt_level=3, shared_libs=libs[name])
    print(f"# {host.model or platform.machine()}, {len(os.sched_getaffinity(0))} cores used, "
          f"vector ISA {host.isa}; KMP_BLOCKTIME={os.environ.get('KMP_BLOCKTIME', '0 (gradir)')}; "
          f"load average {os.getloadavg()[0]:.1f} at the start")
    print(f"{'elements':>10} {'seq us':>10} {'openmp us':>10} {'async us':>10} "
          f"{'seq/openmp':>11} {'seq/async':>10}")
    for n in (64 * 32, 64 * 1024, 64 * 16384):
        a = np.random.default_rng(0).random(n, dtype=np.float32)
        b = np.zeros_like(a)
        da = ctypes.pointer(ctypes.pointer(get_ranked_memref_descriptor(a)))
        db = ctypes.pointer(ctypes.pointer(get_ranked_memref_descriptor(b)))
        times = {k: [] for k in engines}
        for name, e in engines.items():
            b[:] = 0
            e.invoke("k", da, db)
            if not np.allclose(b, np.exp(a), rtol=1e-6):
                print(f"{name}: wrong results", file=sys.stderr)
                return 1
        for _ in range(300 if n < 10 ** 6 else 40):
            for name, e in engines.items():
                t = time.perf_counter()
                e.invoke("k", da, db)
                times[name].append(time.perf_counter() - t)
        med = {k: statistics.median(v) * 1e6 for k, v in times.items()}
        print(f"{n:>10} {med['seq']:>10.1f} {med['openmp']:>10.1f} {med['async']:>10.1f} "
              f"{med['seq'] / med['openmp']:>11.2f} {med['seq'] / med['async']:>10.2f}")
    print(f"# load average {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    _cli.check(sys.argv[1:], __doc__)
    sys.exit(main())
