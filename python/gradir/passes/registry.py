"""The pass registry: pass name -> lazy factory of the pass class.

Factories import their module only when asked, so listing passes is cheap.
``test/transforms/registry.py`` checks that every key equals the
pass's own ``name``.
"""

from __future__ import annotations

import importlib

__all__ = ["PASSES", "get_pass_class", "pass_names"]


def _lazy(module: str, cls: str):
    def factory():
        return getattr(importlib.import_module(module), cls)
    return factory


PASSES = {
    "gpu-check-host": _lazy("gradir.conversion.gpu.gpu_check_host", "GpuCheckHost"),
    "gpu-host-conditions": _lazy("gradir.conversion.gpu.gpu_host_conditions",
                                 "GpuHostConditions"),
    "gpu-device-buffers": _lazy("gradir.conversion.gpu.gpu_device_buffers", "GpuDeviceBuffers"),
    "gpu-fold-transposes": _lazy("gradir.conversion.gpu.gpu_fold_transposes", "GpuFoldTransposes"),
    "gpu-fold-zero-init": _lazy("gradir.conversion.gpu.gpu_fold_zero_init", "GpuFoldZeroInit"),
    "gpu-kernel-attributes": _lazy("gradir.conversion.gpu.gpu_kernel_attributes", "GpuKernelAttributes"),
    "gpu-linalg-to-kernels": _lazy("gradir.conversion.gpu.gpu_linalg_to_kernels", "GpuLinalgToKernels"),
    "gpu-persistent-buffers": _lazy("gradir.conversion.gpu.gpu_persistent_buffers", "GpuPersistentBuffers"),
    "gpu-rlx-to-nvvm": _lazy("gradir.conversion.gpu.gpu_rlx_to_nvvm", "GpuRlxToNvvm"),
    "rlx-cse": _lazy("gradir.transforms.rlx_cse", "RlxCse"),
    "rlx-dce": _lazy("gradir.transforms.rlx_dce", "RlxDce"),
    "rlx-distinct-results": _lazy("gradir.conversion.cpu.rlx_distinct_results", "RlxDistinctResults"),
    "rlx-early-dealloc": _lazy("gradir.conversion.cpu.rlx_early_dealloc", "RlxEarlyDealloc"),
    "rlx-strided-copies": _lazy("gradir.conversion.cpu.rlx_strided_copies", "RlxStridedCopies"),
    "rlx-widen-bool-memrefs": _lazy("gradir.conversion.cpu.rlx_widen_bool_memrefs",
                                    "RlxWidenBoolMemrefs"),
    "rlx-gradient": _lazy("gradir.transforms.rlx_gradient", "RlxGradient"),
    "rlx-lower-to-llvm": _lazy("gradir.conversion.cpu.rlx_lower_to_llvm", "RlxLowerToLlvm"),
    "rlx-loop-hints": _lazy("gradir.conversion.cpu.rlx_loop_hints", "RlxLoopHints"),
    "rlx-matmul-kernels": _lazy("gradir.conversion.cpu.rlx_matmul_kernels", "RlxMatmulKernels"),
    "rlx-pool-kernels": _lazy("gradir.conversion.cpu.rlx_pool_kernels", "RlxPoolKernels"),
    "rlx-math-approx": _lazy("gradir.conversion.cpu.rlx_math_approx", "RlxMathApprox"),
    "rlx-memory-report": _lazy("gradir.transforms.rlx_memory_report", "RlxMemoryReport"),
    "rlx-parallel-loops": _lazy("gradir.conversion.cpu.rlx_parallel_loops", "RlxParallelLoops"),
    "rlx-simplify-gradient": _lazy("gradir.transforms.rlx_simplify_gradient", "RlxSimplifyGradient"),
    "rlx-to-linalg": _lazy("gradir.conversion.rlx_to_linalg", "RlxToLinalg"),
    "rlx-verify": _lazy("gradir.transforms.rlx_verify", "RlxVerify"),
}


def pass_names() -> list[str]:
    return sorted(PASSES)


def get_pass_class(name: str):
    """The pass class registered as ``name`` (KeyError if none)."""
    return PASSES[name]()
