"""The kernel builders of gpu-linalg-to-kernels, one module per strategy:

- ``elementwise``: one thread per output (all-parallel generics, and the
  serial fallback for reductions);
- ``reduction``: block reductions with a tree in workgroup memory, split
  over more blocks with atomics when the outputs do not fill the GPU;
- ``gemm``: shared-memory tiled contractions, split-K when needed;
- ``mma``: the same contractions on tensor cores (``mma.sync``, sm_80+) for
  bf16/f16 operands, ``precision=tf32`` and ``compute-dtype=bf16``;
- ``common``: the ``Generic`` view of a ``linalg.generic``, options, kernel
  names and the small IR builders they share.

The pass (``conversion/gpu/gpu_linalg_to_kernels.py``) matches each generic
and dispatches to one of them."""

from .common import Generic, GenericError, KernelContext, KernelOptions, Namer
from .elementwise import build_elementwise
from .gemm import GEMM_CONFIGS, GemmMatch, build_gemm, gemm_worthwhile, match_gemm
from .reduction import COMBINERS, build_reduction, match_reduction

__all__ = ["Generic", "GenericError", "KernelContext", "KernelOptions", "Namer",
           "build_elementwise", "build_gemm", "build_reduction", "match_gemm",
           "match_reduction", "gemm_worthwhile", "GemmMatch", "GEMM_CONFIGS", "COMBINERS"]
