"""gpu-linalg-to-kernels: every linalg.generic on device buffers becomes a
``gpu.launch`` kernel (elementwise, block reductions, tiled GEMM).

The pass checks its input, picks a strategy per generic and leaves the
building to ``conversion/gpu/kernels/`` (one module per strategy)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mlir import ir

from ...ir import symbol_name
from ...passes.base import ModulePass, PassOptionError, option
from .common import host_functions, walk
from .kernels import (COMBINERS, Generic, GenericError, KernelContext, KernelOptions, Namer,
                      build_elementwise, build_gemm, build_reduction, gemm_worthwhile,
                      match_gemm, match_reduction)
from .kernels.common import outputs_of, reads_device_scalar
from .kernels.mma import build_mma, chip_has_tensor_cores, mma_kind, tensor_core_problem
from .kernels.wgmma import build_wgmma, chip_has_wgmma
from .nvvm import PRECISIONS, chip_problem
from .padded_inputs import erase_folded_buffers, fold_padded_inputs

__all__ = ["GpuLinalgToKernels", "Generic", "COMBINERS", "KERNEL_ATTRIBUTES"]

KERNEL_ATTRIBUTES = "gradir.kernel_attributes"


@dataclass(frozen=True)
class GpuLinalgToKernels(ModulePass):
    """Turns every linalg.generic on device buffers into a gpu.launch kernel.

    Run ``linalg-generalize-named-ops`` first.  Three kernel shapes:
    * all-parallel ops: one thread per element, thread x along the
      innermost loop dimension (coalesced), bounds checked;
    * contractions ``C += A*B`` (matmul, batch_matmul, transposed operands):
      a 16x16-thread block computes a BMxBN tile of C, staging BKxBM and
      BKxBN tiles of A and B in workgroup memory (coalesced loads, padded
      against bank conflicts), each thread accumulating TMxTN outputs in
      registers; the tile size is chosen so the grid fills ``sm-count``
      multiprocessors; an operand that is a zero-filled buffer holding a
      convolution's input in a static subview (its padding, or the zeros
      of a strided transposed convolution) is read from the input itself,
      the tile loads masking the padding, and the fill, the copy and the
      buffer go when every reader becomes such a kernel (padded_inputs.py);
    * reductions with a recognised combiner (add, mul, max, min, and, or,
      xor; several outputs allowed): a block per group of outputs, threads
      striding over the reduction space (along the innermost dimension,
      or along the outer one when the innermost loop is parallel, so loads
      stay coalesced), then a tree in workgroup memory.
    Any other reduction runs one thread per output with a serial loop
    (correct, slower); ``tiled=false`` forces that form everywhere.
    On ``chip`` sm_80 and later, contractions with f32 accumulation whose
    operands are bf16 or f16, or f32 under ``precision=tf32`` or
    ``compute-dtype=bf16``, run on tensor cores: ``wgmma.mma_async`` on sm_90
    and sm_90a (kernels/wgmma.py, compiled for sm_90a), ``mma.sync``
    elsewhere (kernels/mma.py); f32 contractions stay exact fp32 SIMT FMAs
    by default.

        linalg.generic {iterator_types = ["parallel"]} ins(%a) outs(%b) {...}
    becomes
        gpu.launch blocks(%bx, ...) in (%gx = %c1, ...) threads(%tx, ...) in (%c64, ...) {
          %i = ... %bx * 64 + %tx
          scf.if %i < 40 { %v = memref.load %a[%i] ... memref.store ..., %b[%i] }
          gpu.terminator
        }
    """

    name = "gpu-linalg-to-kernels"
    block_size: int = option(256, "threads per block of elementwise and reduction kernels")
    sm_count: int = option(132, "multiprocessors of the target GPU (GEMM tile choice)")
    tiled: bool = option(True, "tiled GEMM and block-reduction kernels (false: one "
                               "thread per output with serial reduction loops)")
    split: bool = option(True, "split reductions and GEMM K loops over more blocks "
                               "(atomic accumulation) when the outputs alone do not fill "
                               "the GPU")
    gemm_min_blocks: int = option(2, "blocks per multiprocessor the GEMM kernels are "
                                     "compiled for (nvvm.minctasm; 0: no limit)")
    chip: str = option("sm_90", "the GPU architecture: from sm_80, bf16/f16 contractions "
                                "(and f32 ones under precision or compute-dtype) run on "
                                "tensor cores (wgmma on sm_90 and sm_90a, else mma.sync)")
    precision: Literal["fp32", "highest", "tf32", "high"] = option(
        "fp32", "f32 contractions: fp32 (alias highest: exact SIMT FMAs) or tf32 (alias "
                "high: TF32 tensor cores, operands rounded to 10 mantissa bits, f32 "
                "accumulation; sm_80+)")
    compute_dtype: Literal["none", "bf16"] = option(
        "none", "bf16: f32 contractions round their operands to bf16 and run on bf16 "
                "tensor cores, accumulating in f32 (sm_80+)")

    def check_options(self):
        if not 32 <= self.block_size <= 1024 or self.block_size % 32:
            raise self.bad_option("block-size", "be a multiple of 32 from 32 to 1024",
                                  self.block_size)
        if self.sm_count < 1:
            raise self.bad_option("sm-count", "be at least 1", self.sm_count)
        if self.gemm_min_blocks < 0:
            raise self.bad_option("gemm-min-blocks", "not be negative", self.gemm_min_blocks)
        problem = chip_problem(self.chip)
        if problem:
            raise PassOptionError(f"option 'chip' of pass '{self.name}': {problem}")
        problem = tensor_core_problem(self.chip, PRECISIONS[self.precision], self.compute_dtype)
        if problem:
            which = "precision" if PRECISIONS[self.precision] != "fp32" else "compute-dtype"
            raise PassOptionError(f"option '{which}' of pass '{self.name}': {problem}")

    def apply(self, module: ir.Operation) -> None:
        options = KernelOptions(block_size=self.block_size, sm_count=self.sm_count,
                                tiled=self.tiled, split=self.split,
                                gemm_min_blocks=self.gemm_min_blocks,
                                tensor_cores=chip_has_tensor_cores(self.chip),
                                precision=PRECISIONS[self.precision],
                                compute_dtype=self.compute_dtype)
        failed = False
        taken = {symbol_name(o) for o in module.regions[0].blocks[0].operations
                 if "sym_name" in o.attributes}
        attrs = {}
        wgmma = chip_has_wgmma(self.chip)
        for fn in host_functions(module):
            ctx = KernelContext(options, Namer(symbol_name(fn), taken))
            padded, folded = fold_padded_inputs(fn, lambda op: _becomes_gemm(ctx, op))
            for op in list(walk(fn, into_kernels=False)):
                if not op.name.startswith("linalg.") or op.name in ("linalg.yield",
                                                                     "linalg.index"):
                    continue
                gen = self._generic(op)
                if gen is None:
                    failed = True
                    continue
                gen.padded = next((d for r, d in padded if r == op), {})
                with ir.InsertionPoint(op), op.location:
                    _lower(ctx, gen, wgmma)
                op.erase()
            erase_folded_buffers(folded)
            attrs.update(ctx.namer.attrs)
        if failed:
            raise self.failure()
        if attrs:
            i32 = ir.IntegerType.get_signless(32)
            module.attributes[KERNEL_ATTRIBUTES] = ir.DictAttr.get(
                {k: ir.DictAttr.get({a: v if isinstance(v, ir.Attribute) else
                                     ir.IntegerAttr.get(i32, v) for a, v in d.items()})
                 for k, d in attrs.items()})
        _erase_dead_host_scalars(module)

    def _generic(self, op: ir.Operation) -> Generic | None:
        """The ``Generic`` view of a linalg op, or None after an error."""
        if op.name != "linalg.generic":
            self.error(op, f"'{op.name}' must be generalized first "
                           "(run linalg-generalize-named-ops)")
            return None
        if any(not isinstance(v.type, ir.MemRefType) for v in outputs_of(op)):
            self.error(op, "linalg on tensors: bufferize before gpu-linalg-to-kernels")
            return None
        try:
            return Generic(op)
        except GenericError as err:
            self.error(op, str(err))
            return None


def _lower(ctx: KernelContext, gen: Generic, wgmma: bool = False) -> None:
    """The strategy for one generic: tiled GEMM (on tensor cores: wgmma
    when ``wgmma``, else mma.sync), block reduction, else one thread per
    output."""
    if not gen.reduction:
        return build_elementwise(ctx, gen)
    if ctx.options.tiled:
        gemm = match_gemm(gen)
        if gemm is not None and gemm_worthwhile(gen, gemm):
            kind = mma_kind(ctx, gen, gemm)     # tensor cores, when asked and able
            if kind is not None and wgmma:
                return build_wgmma(ctx, gen, gemm, kind)
            if kind is not None:
                return build_mma(ctx, gen, gemm, kind)
            return build_gemm(ctx, gen, gemm)
        combiners = match_reduction(gen)
        if combiners is not None:
            return build_reduction(ctx, gen, combiners)
    return build_elementwise(ctx, gen)


def _becomes_gemm(ctx: KernelContext, op: ir.Operation) -> bool:
    """Whether ``_lower`` makes the generic ``op`` a GEMM kernel (one whose
    tile loads can read a padded input in place: ``padded_inputs``)."""
    if not ctx.options.tiled or op.name != "linalg.generic":
        return False
    if any(not isinstance(v.type, ir.MemRefType) for v in outputs_of(op)):
        return False
    try:
        gen = Generic(op)
    except GenericError:
        return False
    if not gen.reduction:
        return False
    gemm = match_gemm(gen)
    return gemm is not None and gemm_worthwhile(gen, gemm)


def _erase_dead_host_scalars(module: ir.Operation) -> None:
    """Host ``memref.load``s (and scalar ops on them) whose uses were all
    sunk into kernels."""
    changed = True
    while changed:
        changed = False
        for fn in host_functions(module):
            for op in reversed(list(walk(fn, into_kernels=False))):
                if reads_device_scalar(op) and not any(list(r.uses) for r in op.results):
                    op.erase()
                    changed = True
