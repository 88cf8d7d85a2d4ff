"""The pass registry: pass name -> lazy factory of the pass class.

Factories import their module only when asked, so listing passes is cheap.
``test/python/transforms/registry.py`` checks that every key equals the
pass's own ``name``.
"""

from __future__ import annotations

import importlib

__all__ = ["PASSES", "get_pass_class", "pass_names"]


def _lazy(module: str, cls: str):
    def factory():
        return getattr(importlib.import_module(module, __package__), cls)
    return factory


PASSES = {
    "gpu-check-host": _lazy("..conversion.gpu_check_host", "GpuCheckHost"),
    "gpu-device-buffers": _lazy("..conversion.gpu_device_buffers", "GpuDeviceBuffers"),
    "gpu-fold-transposes": _lazy("..conversion.gpu_fold_transposes", "GpuFoldTransposes"),
    "gpu-fold-zero-init": _lazy("..conversion.gpu_fold_zero_init", "GpuFoldZeroInit"),
    "gpu-kernel-attributes": _lazy("..conversion.gpu_kernel_attributes", "GpuKernelAttributes"),
    "gpu-linalg-to-kernels": _lazy("..conversion.gpu_linalg_to_kernels", "GpuLinalgToKernels"),
    "gpu-persistent-buffers": _lazy("..conversion.gpu_persistent_buffers", "GpuPersistentBuffers"),
    "gpu-rlx-to-nvvm": _lazy("..conversion.gpu_rlx_to_nvvm", "GpuRlxToNvvm"),
    "rlx-cse": _lazy(".rlx_cse", "RlxCse"),
    "rlx-dce": _lazy(".rlx_dce", "RlxDce"),
    "rlx-early-dealloc": _lazy("..conversion.rlx_early_dealloc", "RlxEarlyDealloc"),
    "rlx-gradient": _lazy(".rlx_gradient", "RlxGradient"),
    "rlx-lower-to-llvm": _lazy("..conversion.rlx_lower_to_llvm", "RlxLowerToLlvm"),
    "rlx-memory-report": _lazy(".rlx_memory_report", "RlxMemoryReport"),
    "rlx-simplify-gradient": _lazy(".rlx_simplify_gradient", "RlxSimplifyGradient"),
    "rlx-to-linalg": _lazy("..conversion.rlx_to_linalg", "RlxToLinalg"),
    "rlx-verify": _lazy(".rlx_verify", "RlxVerify"),
}


def pass_names() -> list[str]:
    return sorted(PASSES)


def get_pass_class(name: str):
    """The pass class registered as ``name`` (KeyError if none)."""
    return PASSES[name]()
