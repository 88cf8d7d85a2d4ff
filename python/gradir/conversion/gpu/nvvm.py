"""The NVIDIA GPU pipeline: rlx -> linalg -> device buffers and kernels ->
NVVM/PTX (or cubin) plus host code that calls ``libmlir_cuda_runtime.so``.

``lower_to_nvvm(module)`` runs four stages (``stage_pipelines()``;
``nvvm_pipeline()`` is all of them as one textual pipeline for
``gradir-opt --pass-pipeline``):

1. ``rlx-to-linalg``;
2. ``bufferize``: inlining, elementwise fusion, ``linalg-generalize-named-ops``,
   ``gpu-fold-transposes`` (transposes/broadcasts become indexing maps),
   ``gpu-fold-zero-init`` (sums into a zero fill start from zero in their
   kernel), one-shot bufferization with the CPU ABI (``pipelines``): every
   public function becomes ``@f(input memrefs..., output memrefs...)`` on
   host memory, with ``llvm.emit_c_interface``;
3. ``kernels``: ``gpu-device-buffers`` (inputs copied to the device once per
   call, outputs computed there and copied back once, intermediates on the
   device; ``keep_resident`` arguments uploaded by the first call only),
   ``gpu-linalg-to-kernels`` (every linalg op a ``gpu.launch``: tiled GEMM
   through workgroup memory, block reductions, coalesced elementwise
   kernels, split-K / split reductions with atomics when the outputs alone
   do not fill the GPU), ``gpu-check-host`` (the host only allocates,
   copies and launches: no silent host fallback) and
   ``gpu-persistent-buffers`` (all device buffers of a function in one arena
   allocated by its first call);
4. ``nvvm``: ``gpu-launch-sink-index-computations``, ``gpu-kernel-outlining``
   (one ``gpu.module`` per function), ``gpu-kernel-attributes``,
   ``nvvm-attach-target``, ``convert-gpu-to-nvvm``, ``gpu-async-region``,
   ``gpu-to-llvm``, the host lowering to LLVM and ``gpu-module-to-binary``
   (``format=isa``: PTX, needs nothing; ``bin``: cubin through ``ptxas``;
   ``fatbin``: also ``fatbinary``).  Math functions in kernels come from
   libdevice, which MLIR 22 embeds (no CUDA toolkit needed for PTX).

The host side of the result runs where ``libmlir_cuda_runtime.so`` and the
CUDA driver (``libcuda.so``) are; the kernels are embedded as ``gpu.binary``
ops that the runtime loads (``mgpuModuleLoad``) from a global constructor.
The module after ``kernels`` runs in ``gradir.testing.gpu_emulator`` (tests without a GPU).
"""

from __future__ import annotations

import re

import os
import shutil
from pathlib import Path

from mlir import ir

__all__ = ["nvvm_pipeline", "lower_to_nvvm", "NVVM_PIPELINE", "FORMATS", "TO_KERNELS",
           "KERNELS_TO_NVVM", "run_pipeline", "find_ptxas", "stage_pipelines", "PRECISIONS",
           "precision_problem"]

FORMATS = ("isa", "bin", "fatbin")
# Convolutions as one generic over the whole batch (implicit GEMM kernels).
RLX_TO_LINALG = "rlx-to-linalg{direct-convolutions=true}"

_BUFFERIZE = ("one-shot-bufferize{bufferize-function-boundaries allow-return-allocs-from-loops "
              "function-boundary-type-conversion=identity-layout-map}")
_OUT_PARAMS = "buffer-results-to-out-params{hoist-static-allocs modify-public-functions}"


def find_ptxas() -> str | None:
    """The ``ptxas`` that ``format=bin`` uses (CUDA toolkit or PATH)."""
    for root in _cuda_roots():
        cand = Path(root) / "bin" / "ptxas"
        if cand.exists():
            return str(cand)
    return shutil.which("ptxas")


def _cuda_roots() -> list[str]:
    roots = [os.environ[v] for v in ("CUDA_ROOT", "CUDA_HOME", "CUDA_PATH") if os.environ.get(v)]
    return roots + ["/usr/local/cuda"]


def _steps_to_memrefs(opt_level: int) -> list[str]:
    steps = ["inline", "symbol-dce", "canonicalize", "cse"]
    if opt_level >= 1:
        steps += ["linalg-fuse-elementwise-ops", "canonicalize", "cse"]
    steps += ["linalg-generalize-named-ops"]
    if opt_level >= 1:
        steps += ["gpu-fold-transposes", "canonicalize", "cse", "gpu-fold-zero-init",
                  "canonicalize", "cse"]
    # rlx-distinct-results: each result its own buffer (out-params crash on a
    # value returned twice; see gradir.conversion.cpu.rlx_distinct_results).
    steps += ["eliminate-empty-tensors", "empty-tensor-to-alloc-tensor",
              "rlx-distinct-results", "rlx-readonly-arguments", _BUFFERIZE, "rlx-order-globals", _OUT_PARAMS, "canonicalize", "cse"]
    return steps


def _steps_to_kernels(opt_level: int, keep_resident=(), sm_count: int = 132,
                      persistent: bool = True, chip: str = "sm_90",
                      precision: str = "fp32", compute_dtype: str | None = None) -> list[str]:
    buffers = "gpu-device-buffers"
    if keep_resident:
        buffers += "{keep-resident=" + ",".join(str(i) for i in keep_resident) + "}"
    kernels = "gpu-linalg-to-kernels"
    opts = []
    if opt_level < 1:
        opts.append("tiled=false")
    if sm_count != 132:
        opts.append(f"sm-count={sm_count}")
    if chip != "sm_90":
        opts.append(f"chip={chip}")
    if precision != "fp32":
        opts.append(f"precision={precision}")
    if compute_dtype not in (None, "none"):
        opts.append(f"compute-dtype={compute_dtype}")
    if opts:
        kernels += "{" + " ".join(opts) + "}"
    steps = [buffers, "linalg-generalize-named-ops"]
    if opt_level >= 1:
        steps += ["gpu-fuse-rows", "gpu-fuse-generics", "canonicalize", "cse"]
    steps += [kernels, "canonicalize", "cse",
             "gpu-host-conditions", "gpu-check-host"]
    if persistent:
        steps += ["gpu-persistent-buffers", "canonicalize", "cse"]
    return steps


def _steps_to_nvvm(chip: str, opt_level: int, fmt: str) -> list[str]:
    if fmt not in FORMATS:
        raise ValueError(f"unknown GPU binary format '{fmt}' (one of {', '.join(FORMATS)})")
    device = ["fold-memref-alias-ops", "expand-strided-metadata", "lower-affine",
              "convert-scf-to-cf"]
    nvvm_opt = max(0, min(3, opt_level))
    return ["gpu-launch-sink-index-computations", "gpu-kernel-outlining",
            "gpu-kernel-attributes", "gpu-check-host"] + _attach_targets(chip, nvvm_opt) + [
            "gpu.module(" + ",".join(device + ["convert-gpu-to-nvvm", "canonicalize", "cse",
                                               "reconcile-unrealized-casts"]) + ")",
            "func.func(llvm-request-c-wrappers)", "func.func(gpu-async-region)",
            "fold-memref-alias-ops", "expand-strided-metadata", "lower-affine",
            "convert-scf-to-cf", "gpu-to-llvm", "convert-to-llvm",
            "reconcile-unrealized-casts", f"gpu-module-to-binary{{format={fmt}}}",
            "gpu-strip-compile-times", "canonicalize", "cse"]


# The gpu.modules of wgmma kernels (kernels/wgmma.py: names ending in
# "_sm90a") and the others: LLVM's regular expressions have no negation, so
# "not ending in _sm90a" is spelled out (at most 5 characters, or a last
# character that differs, or ...).
_SM90A_MODULES = "_sm90a$"
_OTHER_MODULES = "^(.?.?.?.?.?|.*([^a]|[^0]a|[^9]0a|[^m]90a|[^s]m90a|[^_]sm90a))$"


def _attach_targets(chip: str, nvvm_opt: int) -> list[str]:
    """``nvvm-attach-target`` for ``chip``; on sm_90 the modules holding
    wgmma kernels get sm_90a (wgmma is an sm_90a feature: ptxas refuses it
    for sm_90), every other module sm_90 (so their PTX also runs on later
    chips)."""
    if chip != "sm_90":
        return [f"nvvm-attach-target{{chip={chip} O={nvvm_opt}}}"]
    return [f"nvvm-attach-target{{module={_SM90A_MODULES} chip=sm_90a O={nvvm_opt}}}",
            f"nvvm-attach-target{{module={_OTHER_MODULES} chip=sm_90 O={nvvm_opt}}}"]


def nvvm_pipeline(chip: str = "sm_90", opt_level: int = 3, format: str = "isa",  # noqa: A002
                  keep_resident=(), sm_count: int = 132, precision: str = "fp32",
                  compute_dtype: str | None = None) -> str:
    """The whole pipeline from rlx to LLVM + GPU binary, in gradir-opt syntax."""
    steps = ([RLX_TO_LINALG] + _steps_to_memrefs(opt_level)
             + _steps_to_kernels(opt_level, keep_resident, sm_count, chip=chip,
                                 precision=precision, compute_dtype=compute_dtype)
             + _steps_to_nvvm(chip, opt_level, format))
    return "builtin.module(" + ",".join(steps) + ")"


def stage_pipelines(chip: str = "sm_90", opt_level: int = 3, format: str = "isa",  # noqa: A002
                    keep_resident=(), sm_count: int = 132, precision: str = "fp32",
                    compute_dtype: str | None = None) -> list[tuple[str, str]]:
    """``(stage name, pipeline)`` pairs that together make ``nvvm_pipeline``."""
    wrap = lambda steps: "builtin.module(" + ",".join(steps) + ")"  # noqa: E731
    return [("rlx-to-linalg", f"builtin.module({RLX_TO_LINALG})"),
            ("bufferize", wrap(_steps_to_memrefs(opt_level))),
            ("kernels", wrap(_steps_to_kernels(opt_level, keep_resident, sm_count, chip=chip,
                                               precision=precision,
                                               compute_dtype=compute_dtype))),
            ("nvvm", wrap(_steps_to_nvvm(chip, opt_level, format)))]


NVVM_PIPELINE = nvvm_pipeline()
# From linalg on tensors to host code with gpu.launch kernels (no NVVM yet).
TO_KERNELS = "builtin.module(" + ",".join(_steps_to_memrefs(3) + _steps_to_kernels(3)) + ")"
# From gpu.launch kernels on device buffers to LLVM + PTX.
KERNELS_TO_NVVM = "builtin.module(" + ",".join(_steps_to_nvvm("sm_90", 3, "isa")) + ")"


_CHIP = re.compile(r"sm_(\d+)[a-z]?")


def chip_problem(chip) -> str | None:
    """Why ``chip`` is no NVIDIA GPU architecture NVVM takes ("sm_90",
    "sm_90a", ... from sm_20), or None.  An empty or short name ended the
    process (an assertion in NVVM's target attribute)."""
    m = _CHIP.fullmatch(chip) if isinstance(chip, str) else None
    if m is None:
        return f"chip must name an NVIDIA GPU architecture like sm_90, not {chip!r}"
    if int(m.group(1)) < 20:
        return f"chip {chip!r}: NVVM's oldest architecture is sm_20"
    return None


# PyTorch's torch.set_float32_matmul_precision names: "highest" (fp32),
# "high" (TF32)
PRECISIONS = {"fp32": "fp32", "highest": "fp32", "tf32": "tf32", "high": "tf32"}
COMPUTE_DTYPES = (None, "bf16")


def precision_problem(chip: str | None, precision, compute_dtype) -> str | None:
    """Why ``precision``/``compute_dtype`` (``gradir.compile``'s spelling:
    "fp32" or its alias "highest", "tf32" or its alias "high"; None or
    "bf16") are invalid, or
    invalid for ``chip`` (tensor cores from sm_80; None: any chip), or None."""
    if precision not in PRECISIONS:
        return (f"precision must be 'fp32' (alias 'highest') or 'tf32' (alias 'high'), "
                f"not {precision!r}")
    if compute_dtype not in COMPUTE_DTYPES:
        return f"compute_dtype must be None or 'bf16', not {compute_dtype!r}"
    if chip is None:
        return None
    problem = chip_problem(chip)
    if problem:
        return problem
    from .kernels.mma import tensor_core_problem
    return tensor_core_problem(chip, PRECISIONS[precision], compute_dtype or "none")


def lower_to_nvvm(module_op, *, chip: str = "sm_90", opt_level: int = 3,
                  format: str = "isa", keep_resident=(), sm_count: int = 132,  # noqa: A002
                  stop_after: str | None = None, precision: str = "fp32",
                  compute_dtype: str | None = None) -> None:
    """Lowers ``module_op`` (rlx functions; mutated in place) for NVIDIA GPUs.

    ``precision`` ("fp32", "highest", "tf32" or "high") and ``compute_dtype`` (None or
    "bf16") pick the f32 contractions' arithmetic (gpu-linalg-to-kernels).

    ``stop_after`` names a stage of ``stage_pipelines`` ("rlx-to-linalg",
    "bufferize", "kernels") to stop early (tests, the GPU emulator).
    Raises ``mlir.ir.MLIRError`` with the failing pass's diagnostics and a
    note naming a command that reproduces the failure."""
    if format not in FORMATS:
        raise ValueError(f"unknown GPU binary format '{format}' (one of {', '.join(FORMATS)})")
    problem = chip_problem(chip) or precision_problem(chip, precision, compute_dtype)
    if problem:
        raise ValueError(problem)
    precision = PRECISIONS[precision]
    op = module_op.operation if hasattr(module_op, "operation") else module_op
    done = []
    with op.context:
        for stage, text in stage_pipelines(chip, opt_level, format, keep_resident, sm_count,
                                           precision, compute_dtype):
            try:
                run_pipeline(text, op)
            except ir.MLIRError as err:
                before = ("input.mlir" if not done else
                          f"<(gradir-opt --pass-pipeline='{_join(done)}' input.mlir)")
                err.add_note(f"reproduce with: gradir-opt --pass-pipeline='{text}' {before}")
                raise
            done.append(text)
            if stage == "rlx-to-linalg":
                # a loop step computed at run time is checked there, as on the
                # CPU (conversion/cpu/runtime_checks.py): the host runs the loop
                from ..cpu.runtime_checks import add_step_checks
                add_step_checks(op)
            if stage == stop_after:
                return


def run_pipeline(text: str, op: ir.Operation) -> None:
    """Runs a ``builtin.module(...)`` pipeline that may name gradir passes."""
    from ...passes.pipeline import build_pass_manager, parse_pipeline
    from mlir.passmanager import PassManager

    if any(e.has_gradir_pass() for e in parse_pipeline(text)):
        build_pass_manager(text, op.context).run(op)
    else:  # upstream only: MLIR's own parser (anchored on the module itself)
        PassManager.parse(text, op.context).run(op)


def _join(pipelines: list[str]) -> str:
    inner = [p[len("builtin.module("):-1] for p in pipelines]
    return "builtin.module(" + ",".join(inner) + ")"
