"""gpu-rlx-to-nvvm: the NVVM pipeline (gradir.conversion.gpu.nvvm) up to its
kernels as one gradir pass."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from mlir import ir

from ...passes.base import ModulePass, PassOptionError, option
from .nvvm import lower_to_nvvm

__all__ = ["GpuRlxToNvvm", "STAGES"]

Stage = Literal["rlx-to-linalg", "bufferize", "kernels", "nvvm"]
STAGES = get_args(Stage)


@dataclass(frozen=True)
class GpuRlxToNvvm(ModulePass):
    """Lowers an rlx module to GPU kernels on device buffers (gradir.compile target=cuda).

    Runs the first stages of ``gradir.conversion.gpu.nvvm``: rlx-to-linalg,
    fusion and bufferization (host memref ABI: inputs, then outputs), then
    device buffers and kernels: ``gpu.launch`` on device memory, the host only
    allocating, copying and launching.  ``stage=nvvm`` goes all the way
    (outlining, NVVM, host LLVM, ``gpu-module-to-binary`` with ``format``
    isa (PTX) or bin (cubin, needs ptxas) for ``chip``): that stage loads
    dialects a pass may not load while a pipeline runs, so with it the pass
    expands, when the pipeline is built, into ``nvvm_pipeline(...)``'s
    passes (and must then be at the top level of the pipeline).

        func.func @f(%x: tensor<4xf32>) -> tensor<4xf32>
    becomes
        func.func @f(%x: memref<4xf32>, %out: memref<4xf32>) {
          ... gpu.memcpy, gpu.launch ..., gpu.memcpy %out, ...
    """

    name = "gpu-rlx-to-nvvm"

    opt_level: int = option(3, "0: serial kernels, no fusion; 1-3: tiled kernels, fusion")
    keep_resident: tuple[int, ...] = option((), "argument indices kept on the device "
                                                "across calls")
    sm_count: int = option(132, "multiprocessors of the target (GEMM tile choice)")
    stage: Stage = option("kernels", "where to stop: rlx-to-linalg, bufferize, kernels or "
                                   "nvvm (host LLVM + GPU binary)")
    chip: str = option("sm_90", "the GPU architecture (stage=nvvm; from sm_80, tensor-core "
                                "GEMMs in the kernels stage)")
    precision: Literal["fp32", "highest", "tf32", "high"] = option(
        "fp32", "f32 matmuls and convolutions: fp32 (alias highest: exact) or tf32 (alias "
                "high: TF32 tensor cores, f32 accumulation; sm_80+)")
    compute_dtype: Literal["none", "bf16"] = option(
        "none", "bf16: f32 matmul and convolution operands rounded to bf16, on bf16 tensor "
                "cores with f32 accumulation (sm_80+)")
    format: Literal["isa", "bin", "fatbin"] = option("isa", "GPU binary format for stage=nvvm: isa (PTX), bin (cubin, "
                                "needs ptxas) or fatbin")

    def check_options(self):
        if not 0 <= self.opt_level <= 3:
            raise self.bad_option("opt-level", "be from 0 to 3", self.opt_level)
        if self.sm_count < 1:
            raise self.bad_option("sm-count", "be at least 1", self.sm_count)
        from .nvvm import PRECISIONS, chip_problem, precision_problem
        problem = chip_problem(self.chip)
        if problem:
            raise PassOptionError(f"option 'chip' of pass '{self.name}': {problem}")
        problem = precision_problem(self.chip, self.precision, self._compute_dtype())
        if problem:
            which = "precision" if PRECISIONS[self.precision] != "fp32" else "compute-dtype"
            raise PassOptionError(f"option '{which}' of pass '{self.name}': {problem}")

    def expand(self) -> str | None:
        """The pipeline this pass stands for when it must not run nested."""
        if self.stage != "nvvm":
            return None
        from .nvvm import nvvm_pipeline
        from .nvvm import PRECISIONS
        return nvvm_pipeline(self.chip, self.opt_level, self.format, self.keep_resident,
                             self.sm_count, PRECISIONS[self.precision], self._compute_dtype())

    def _compute_dtype(self):
        return None if self.compute_dtype == "none" else self.compute_dtype

    def apply(self, module: ir.Operation) -> None:
        try:
            lower_to_nvvm(module, opt_level=self.opt_level, keep_resident=self.keep_resident,
                          sm_count=self.sm_count, stop_after=self.stage, chip=self.chip,
                          precision=self.precision, compute_dtype=self._compute_dtype())
        except ir.MLIRError as err:
            if not err.error_diagnostics:
                self.error(module, f"{self.name}: {err}")
            for diag in err.error_diagnostics:
                self.error(diag.location, diag.message)
            raise self.failure() from None
