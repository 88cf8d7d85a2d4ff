"""gradir.compile: rlx module -> machine code callable on numpy arrays."""

from __future__ import annotations

import os
from pathlib import Path

from mlir import ir

from .. import _compat
from ..ir import as_operation, make_context, print_module
from .abi import Function, FunctionTable
from .signature import CompileError, public_functions, signature_of
from .export import export_library
from .toolchain import (TARGETS, CompileOptions, packed_caller, runtime_libraries,
                        runtime_library_dir, uses_openmp)

__all__ = ["CompileOptions", "Executable", "compile", "runtime_library_dir"]


class Executable(FunctionTable):
    """Compiled functions of one module: ``exe["main_adjoint"](x, w)``.

    Arguments and results are numpy arrays (tuples for tuple types); the
    functions check the count, shapes and dtypes of what they are given.
    """

    def __init__(self, lowered: ir.Module, signatures: dict, options: CompileOptions):
        self.options = options
        self.signatures = signatures
        self._lowered_text = print_module(lowered)
        threads = options.threads if uses_openmp(self._lowered_text) else 1
        libs = [str(p) for p in runtime_libraries(options.target, threads)]
        if threads > 1:
            import ctypes
            from .openmp import configure
            configure(ctypes.CDLL(libs[-1]))   # libomp, before its first region
        self._engine = _compat.execution_engine(lowered, options.opt_level, libs)
        self._functions = {}
        for name, sig in signatures.items():
            fn_ptr = self._engine.raw_lookup("_mlir_ciface_" + name)
            if not fn_ptr:
                raise CompileError(f"compiled module lacks '_mlir_ciface_{name}'")
            self._functions[name] = Function(sig, packed_caller(fn_ptr), keepalive=self._engine)

    @property
    def llvm_ir(self) -> str:
        """The lowered module (LLVM dialect) as text."""
        return self._lowered_text

    def export_library(self, path: str | os.PathLike) -> Path:
        """Writes a shared library with every public function and its
        signature, and copies the runtime libraries it needs next to it.
        ``gradir.runtime.load(path)`` runs it with numpy and ctypes only."""
        return export_library(self, Path(path))


def lower(module, options: CompileOptions) -> tuple[ir.Module, dict]:
    """A lowered copy of ``module`` (left untouched) and the signatures of
    its public functions."""
    if options.target not in TARGETS:
        raise CompileError(f"unknown target '{options.target}' "
                           f"(expected one of: {', '.join(TARGETS)})")
    src = as_operation(module)
    ctx = make_context()
    with ctx:
        copy = ir.Module.parse(print_module(src, debug_info=True, segments=True))
        sigs = {}
        for fn in public_functions(copy.operation):
            sig = signature_of(fn)
            sigs[sig.name] = sig
        if not sigs:
            raise CompileError("the module has no public function with a body to compile")
        try:
            if options.target == "cpu":
                from ..conversion.cpu.pipeline import lower_to_llvm
                lower_to_llvm(copy.operation, opt_level=options.opt_level, cpu=options.cpu,
                              threads=options.threads)
            else:
                from ..conversion.gpu.nvvm import lower_to_nvvm
                lower_to_nvvm(copy.operation, chip=options.chip, opt_level=options.opt_level)
        except ir.MLIRError as err:
            raise CompileError(_compat.format_mlir_error(err)) from None
    return copy, sigs


def compile(module, target: str = "cpu", *, opt_level: int = 3, chip: str = "sm_90",
            keep_resident=(), cpu: str = "host", threads: int | None = None) -> Executable:
    """Compiles every public function of an rlx module for ``target``.

        exe = gradir.compile(module)
        loss, gx, gw = exe["main_adjoint"](x, w)

    ``cpu`` (target "cpu"): the CPU to generate code for, "host" (this
    machine) or an LLVM CPU name of ``gradir.conversion.cpu.host.NAMED_TARGETS``
    ("x86-64-v3" for AVX2, "x86-64-v4", "skylake-avx512", ...); the schedule's
    register tiles and LLVM's target-cpu/features follow it.

    ``threads`` (target "cpu"): how many threads the compiled code runs its
    parallel loops on (matmul column strips, elementwise ops, the blocks of
    long sums, convolution batches), through LLVM's OpenMP runtime.  Fixed
    at compile time: None means ``$GRADIR_NUM_THREADS``, else
    ``$OMP_NUM_THREADS``, else the cores this process may run on
    (``os.sched_getaffinity``), read when ``compile`` runs.  1 gives
    single-threaded code with no runtime.  Results are bitwise identical
    from run to run, and at every thread count.
    """
    if not hasattr(module, "operation") and not isinstance(module, ir.Operation):
        raise TypeError(f"gradir.compile expects an MLIR module (gradir.parse(text)), "
                        f"not {type(module).__name__}")
    if isinstance(opt_level, bool) or not isinstance(opt_level, int) or not 0 <= opt_level <= 3:
        raise CompileError(f"opt_level must be an integer from 0 to 3, not {opt_level!r}")
    from ..conversion.cpu.host import NAMED_TARGETS
    if cpu != "host" and cpu not in NAMED_TARGETS:
        raise CompileError(f"unknown cpu '{cpu}' (expected host or one of: "
                           f"{', '.join(sorted(NAMED_TARGETS))})")
    from ..conversion.cpu.host import resolve_threads
    try:
        threads = resolve_threads(threads) if target == "cpu" else 1
    except ValueError as err:
        raise CompileError(str(err)) from None
    options = CompileOptions(target, opt_level, chip, tuple(keep_resident), cpu, threads)
    if target == "cuda":
        from .cuda import compile_cuda
        return compile_cuda(module, options)
    lowered, sigs = lower(module, options)
    with lowered.context:
        return Executable(lowered, sigs, options)
