"""The pass registry: every gradir pass by name, as a factory that imports
the pass's module only when asked (listing passes stays cheap).

It names every pass module, so it sits above ``transforms/`` and
``conversion/`` (as xDSL keeps ``get_all_passes`` in ``xdsl/transforms``),
not inside ``passes/``: ``passes/`` (the pass base class, options, pipeline
parsing) knows no pass, and finds this table through
``gradir.passes.registry``.  ``test/passes/registry.py`` checks that every key
equals the pass's own ``name``; ``test/docs/reference.py`` that docs/passes.md
lists every pass and option.  To add a pass: its module under transforms/ or
conversion/, a factory here, its FileCheck tests under test/.
"""

from __future__ import annotations

__all__ = ["PASSES", "get_pass_class", "pass_names"]



def _gpu_check_host():
    from .conversion.gpu.gpu_check_host import GpuCheckHost
    return GpuCheckHost


def _gpu_device_buffers():
    from .conversion.gpu.gpu_device_buffers import GpuDeviceBuffers
    return GpuDeviceBuffers


def _gpu_fold_transposes():
    from .conversion.gpu.gpu_fold_transposes import GpuFoldTransposes
    return GpuFoldTransposes


def _gpu_fold_zero_init():
    from .conversion.gpu.gpu_fold_zero_init import GpuFoldZeroInit
    return GpuFoldZeroInit


def _gpu_fuse_generics():
    from .conversion.gpu.gpu_fuse_generics import GpuFuseGenerics
    return GpuFuseGenerics


def _gpu_fuse_rows():
    from .conversion.gpu.gpu_fuse_rows import GpuFuseRows
    return GpuFuseRows


def _gpu_host_conditions():
    from .conversion.gpu.gpu_host_conditions import GpuHostConditions
    return GpuHostConditions


def _gpu_strip_compile_times():
    from .conversion.gpu.gpu_strip_compile_times import GpuStripCompileTimes
    return GpuStripCompileTimes


def _gpu_kernel_attributes():
    from .conversion.gpu.gpu_kernel_attributes import GpuKernelAttributes
    return GpuKernelAttributes


def _gpu_linalg_to_kernels():
    from .conversion.gpu.gpu_linalg_to_kernels import GpuLinalgToKernels
    return GpuLinalgToKernels


def _gpu_persistent_buffers():
    from .conversion.gpu.gpu_persistent_buffers import GpuPersistentBuffers
    return GpuPersistentBuffers


def _gpu_rlx_to_nvvm():
    from .conversion.gpu.gpu_rlx_to_nvvm import GpuRlxToNvvm
    return GpuRlxToNvvm


def _rlx_cse():
    from .transforms.rlx_cse import RlxCse
    return RlxCse


def _rlx_dce():
    from .transforms.rlx_dce import RlxDce
    return RlxDce


def _rlx_distinct_results():
    from .conversion.cpu.rlx_distinct_results import RlxDistinctResults
    return RlxDistinctResults


def _rlx_order_globals():
    from .conversion.cpu.rlx_order_globals import RlxOrderGlobals
    return RlxOrderGlobals


def _rlx_readonly_arguments():
    from .conversion.cpu.rlx_readonly_arguments import RlxReadonlyArguments
    return RlxReadonlyArguments


def _rlx_early_dealloc():
    from .conversion.cpu.rlx_early_dealloc import RlxEarlyDealloc
    return RlxEarlyDealloc


def _rlx_fuse_attention():
    from .transforms.rlx_fuse_attention import RlxFuseAttention
    return RlxFuseAttention


def _rlx_gradient():
    from .transforms.rlx_gradient import RlxGradient
    return RlxGradient


def _rlx_loop_hints():
    from .conversion.cpu.rlx_loop_hints import RlxLoopHints
    return RlxLoopHints


def _rlx_lower_to_llvm():
    from .conversion.cpu.rlx_lower_to_llvm import RlxLowerToLlvm
    return RlxLowerToLlvm


def _rlx_math_approx():
    from .conversion.cpu.rlx_math_approx import RlxMathApprox
    return RlxMathApprox


def _rlx_matmul_kernels():
    from .conversion.cpu.rlx_matmul_kernels import RlxMatmulKernels
    return RlxMatmulKernels


def _rlx_memory_report():
    from .transforms.rlx_memory_report import RlxMemoryReport
    return RlxMemoryReport


def _rlx_parallel_loops():
    from .conversion.cpu.rlx_parallel_loops import RlxParallelLoops
    return RlxParallelLoops


def _rlx_conv_kernels():
    from .conversion.cpu.rlx_conv_kernels import RlxConvKernels
    return RlxConvKernels


def _rlx_pool_indices():
    from .conversion.cpu.rlx_pool_indices import RlxPoolIndices
    return RlxPoolIndices


def _rlx_pool_kernels():
    from .conversion.cpu.rlx_pool_kernels import RlxPoolKernels
    return RlxPoolKernels


def _rlx_scalarize():
    from .conversion.cpu.rlx_scalarize import RlxScalarize
    return RlxScalarize


def _rlx_simplify_gradient():
    from .transforms.rlx_simplify_gradient import RlxSimplifyGradient
    return RlxSimplifyGradient


def _rlx_strided_copies():
    from .conversion.cpu.rlx_strided_copies import RlxStridedCopies
    return RlxStridedCopies


def _rlx_to_linalg():
    from .conversion.rlx_to_linalg import RlxToLinalg
    return RlxToLinalg


def _rlx_verify():
    from .transforms.rlx_verify import RlxVerify
    return RlxVerify


def _rlx_collapse_elementwise():
    from .conversion.cpu.rlx_collapse_elementwise import RlxCollapseElementwise
    return RlxCollapseElementwise


def _rlx_fuse_chains():
    from .conversion.cpu.rlx_fuse_chains import RlxFuseChains
    return RlxFuseChains


def _rlx_merge_elementwise():
    from .conversion.cpu.rlx_merge_elementwise import RlxMergeElementwise
    return RlxMergeElementwise


def _rlx_widen_bool_memrefs():
    from .conversion.cpu.rlx_widen_bool_memrefs import RlxWidenBoolMemrefs
    return RlxWidenBoolMemrefs


PASSES = {
    "gpu-check-host": _gpu_check_host,
    "gpu-device-buffers": _gpu_device_buffers,
    "gpu-fold-transposes": _gpu_fold_transposes,
    "gpu-fold-zero-init": _gpu_fold_zero_init,
    "gpu-fuse-generics": _gpu_fuse_generics,
    "gpu-fuse-rows": _gpu_fuse_rows,
    "gpu-host-conditions": _gpu_host_conditions,
    "gpu-kernel-attributes": _gpu_kernel_attributes,
    "gpu-linalg-to-kernels": _gpu_linalg_to_kernels,
    "gpu-persistent-buffers": _gpu_persistent_buffers,
    "gpu-rlx-to-nvvm": _gpu_rlx_to_nvvm,
    "gpu-strip-compile-times": _gpu_strip_compile_times,
    "rlx-cse": _rlx_cse,
    "rlx-dce": _rlx_dce,
    "rlx-distinct-results": _rlx_distinct_results,
    "rlx-early-dealloc": _rlx_early_dealloc,
    "rlx-fuse-attention": _rlx_fuse_attention,
    "rlx-fuse-chains": _rlx_fuse_chains,
    "rlx-gradient": _rlx_gradient,
    "rlx-loop-hints": _rlx_loop_hints,
    "rlx-lower-to-llvm": _rlx_lower_to_llvm,
    "rlx-math-approx": _rlx_math_approx,
    "rlx-matmul-kernels": _rlx_matmul_kernels,
    "rlx-merge-elementwise": _rlx_merge_elementwise,
    "rlx-memory-report": _rlx_memory_report,
    "rlx-order-globals": _rlx_order_globals,
    "rlx-parallel-loops": _rlx_parallel_loops,
    "rlx-pool-indices": _rlx_pool_indices,
    "rlx-pool-kernels": _rlx_pool_kernels,
    "rlx-conv-kernels": _rlx_conv_kernels,
    "rlx-readonly-arguments": _rlx_readonly_arguments,
    "rlx-scalarize": _rlx_scalarize,
    "rlx-simplify-gradient": _rlx_simplify_gradient,
    "rlx-strided-copies": _rlx_strided_copies,
    "rlx-to-linalg": _rlx_to_linalg,
    "rlx-verify": _rlx_verify,
    "rlx-widen-bool-memrefs": _rlx_widen_bool_memrefs,
    "rlx-collapse-elementwise": _rlx_collapse_elementwise,
}


def pass_names() -> list[str]:
    return sorted(PASSES)


def get_pass_class(name: str):
    """The pass class registered as ``name`` (KeyError if none)."""
    return PASSES[name]()
