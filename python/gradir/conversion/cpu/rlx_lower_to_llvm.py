"""rlx-lower-to-llvm: the whole CPU pipeline (rlx -> linalg -> LLVM) as one
gradir pass."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Optional

from mlir import ir

from ...passes.base import ModulePass, option
from .pipeline import lower_to_llvm, prepare_context

__all__ = ["RlxLowerToLlvm"]


@dataclass(frozen=True)
class RlxLowerToLlvm(ModulePass):
    """Lowers an rlx module to the LLVM dialect for the CPU (the pipeline of gradir.compile).

    Runs ``rlx-to-linalg`` and then ``gradir.conversion.cpu.pipeline``'s
    upstream pipeline (``LINALG_TO_LLVM``): elementwise fusion, the
    transform-dialect schedule (tiled, vectorized matmuls and transposes),
    one-shot bufferization of function boundaries, results turned into
    out-params, deallocation of intermediates, loops, vectors and LLVM.
    Every public function ``@f(tensors...) -> results`` becomes
    ``@f(input memrefs..., output memrefs...)`` with
    ``llvm.emit_c_interface``; ``stage=bufferized`` stops at the memref
    level, where that ABI is readable:

        func.func @f(%x: tensor<4xf32>) -> tensor<4xf32>
    becomes (stage=bufferized)
        func.func @f(%x: memref<4xf32>, %out: memref<4xf32>)
    """

    name = "rlx-lower-to-llvm"

    opt_level: int = option(3, "0: no fusion or schedule; 1: elementwise fusion; "
                               "2 and 3: also the transform-dialect schedule (3 is "
                               "gradir.compile's default too)")
    stage: Literal["bufferized", "llvm"] = option("llvm", "where to stop: bufferized "
                                                          "(memrefs) or llvm")
    cpu: str = option("host", "the CPU to generate code for: host or an LLVM CPU name "
                              "(x86-64-v3, x86-64-v4, skylake-avx512, ...)")
    threads: Optional[int] = option(None, "threads the code runs on, fixed at compile time "
                                       "(1: single-threaded code; default: $GRADIR_NUM_THREADS, "
                                       "$OMP_NUM_THREADS or the cores of the process's CPU "
                                       "affinity)")
    kernels: bool = option(False, "2-D f32/f64 matmuls (convolutions' GEMMs too) and 2x2 "
                                  "pools call gradir's kernel library (gradir.compile's "
                                  "kernels=True; opt levels 1-3)")

    def check_options(self):
        if not 0 <= self.opt_level <= 3:
            raise self.bad_option("opt-level", "be from 0 to 3", self.opt_level)
        from .host import NAMED_TARGETS
        if self.cpu != "host" and self.cpu not in NAMED_TARGETS:
            raise self.bad_option("cpu", f"be host or one of {', '.join(sorted(NAMED_TARGETS))}",
                                  f"'{self.cpu}'")
        if self.threads is not None and self.threads < 1:
            raise self.bad_option("threads", "be a positive integer", self.threads)

    def prepare(self, context: ir.Context) -> None:
        prepare_context(context)

    def apply(self, module: ir.Operation) -> None:
        try:
            from .host import resolve_threads
            try:
                threads = resolve_threads(self.threads)
            except ValueError as err:
                self.error(module, f"{self.name}: {err}")
                raise self.failure() from None
            lower_to_llvm(module, opt_level=self.opt_level, stage=self.stage, cpu=self.cpu,
                          threads=threads, verify_each=True,
                          kernels=self.kernels and self.opt_level >= 1)
        except ir.MLIRError as err:
            if not err.error_diagnostics:
                self.error(module, f"{self.name}: {err}")
            for diag in err.error_diagnostics:
                self.error(diag.location, diag.message)
            raise self.failure() from None
