"""The CPU pipeline: rlx -> linalg -> bufferized loops/vectors -> LLVM.

``lower_to_llvm(module)`` runs ``rlx-to-linalg`` and then the upstream
pipeline ``LINALG_TO_LLVM`` (a textual pipeline, so ``gradir-opt`` and
``mlir-opt`` users can reproduce it: ``CPU_PIPELINE`` is the whole thing
for ``gradir-opt --pass-pipeline=...``).

ABI of the result (what the runtime relies on): every public function
``@f(inputs...) -> results...`` of the rlx module becomes
``@f(input memrefs..., output memrefs...)`` with no results, tuples
flattened depth-first (``gradir.original_type`` keeps the original
function type).  Memrefs have identity layouts; the caller allocates the
outputs (numpy arrays) and the function writes them.  Each public function
has ``llvm.emit_c_interface``: ``_mlir_ciface_f(ptr to input descriptor...,
ptr to output descriptor...)``.  Intermediate buffers are freed before the
function returns.
"""

from __future__ import annotations

from pathlib import Path

from mlir import ir
from mlir.passmanager import PassManager


__all__ = ["LINALG_TO_LLVM", "CPU_PIPELINE", "lower_to_llvm", "linalg_to_llvm_pipeline",
           "SCHEDULE_LIBRARY"]

# The transform-dialect schedule (tiling and vectorization of contractions).
SCHEDULE_LIBRARY = Path(__file__).resolve().parent / "cpu_schedule.mlir"

_BUFFERIZE = ("one-shot-bufferize{bufferize-function-boundaries "
              "function-boundary-type-conversion=identity-layout-map}")
_OUT_PARAMS = "buffer-results-to-out-params{hoist-static-allocs modify-public-functions}"


def linalg_to_llvm_pipeline(opt_level: int = 2, schedule: str | Path | None = None) -> str:
    """The upstream pipeline from linalg-on-tensors to the LLVM dialect.

    ``opt_level`` 0: no fusion, no vectorization schedule (fastest to
    compile); 1: elementwise fusion; 2 and 3: also the transform-dialect
    schedule ``schedule`` (default ``SCHEDULE_LIBRARY``) that tiles and
    vectorizes contractions."""
    steps = ["inline", "symbol-dce", "canonicalize", "cse"]
    if opt_level >= 1:
        steps += ["linalg-fuse-elementwise-ops", "canonicalize", "cse"]
    if opt_level >= 2:
        library = Path(schedule or SCHEDULE_LIBRARY)
        steps += [f"transform-preload-library{{transform-library-paths={library}}}",
                  "transform-interpreter{entry-point=gradir_cpu_tensor}", "canonicalize", "cse"]
    steps += ["eliminate-empty-tensors", "empty-tensor-to-alloc-tensor", _BUFFERIZE,
              _OUT_PARAMS, "canonicalize", "cse", "buffer-deallocation-pipeline",
              "convert-bufferization-to-memref", "func.func(convert-linalg-to-loops)",
              "func.func(convert-vector-to-scf{full-unroll=true})"]
    steps += ["func.func(llvm-request-c-wrappers)", "fold-memref-alias-ops",
              "expand-strided-metadata", "lower-affine", "convert-scf-to-cf",
              "convert-vector-to-llvm", "convert-math-to-llvm", "convert-math-to-libm", "convert-to-llvm",
              "reconcile-unrealized-casts", "canonicalize", "cse"]
    return "builtin.module(" + ",".join(steps) + ")"


LINALG_TO_LLVM = linalg_to_llvm_pipeline(2)

# The whole CPU pipeline in gradir-opt syntax.
CPU_PIPELINE = "builtin.module(rlx-to-linalg," + LINALG_TO_LLVM[len("builtin.module("):]


def lower_to_llvm(module, *, opt_level: int = 2) -> None:
    """Lowers ``module`` (rlx functions; mutated in place) to the LLVM
    dialect with the ABI described in this module's docstring.

    Raises ``mlir.ir.MLIRError`` with the diagnostics of the failing pass
    (rlx-to-linalg reports refusals at the offending op) and a note naming a
    command that reproduces the failure."""
    from .rlx_to_linalg import RlxToLinalg
    from ..transforms.pipeline import build_pass_manager

    op = module.operation if hasattr(module, "operation") else module
    with op.context:
        pm = build_pass_manager("builtin.module(rlx-to-linalg)", op.context)
        try:
            pm.run(op)
        except ir.MLIRError as err:
            err.add_note("reproduce with: gradir-opt --rlx-to-linalg input.mlir")
            raise
        text = linalg_to_llvm_pipeline(opt_level)
        try:
            PassManager.parse(text).run(op)
        except ir.MLIRError as err:
            err.add_note(f"reproduce with: gradir-opt --rlx-to-linalg input.mlir | "
                         f"mlir-opt --pass-pipeline='{text}'")
            raise
