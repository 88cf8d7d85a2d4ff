"""Execution: MLIR's ExecutionEngine (its constructor, the ORC
initializers, runtime symbols), the engine made through the C API with the
GIL released, and LLVM IR translation in process."""

from __future__ import annotations

import threading

from mlir import ir

from .capi import _CAPSULE_POINTER, _MODULE_CAPSULE, _capi_lib, _raw_lib, _released_lib


def execution_engine(module: ir.Module, opt_level: int, shared_libs: list[str],
                     pic: bool = False):
    """An ExecutionEngine over an LLVM-dialect module (MLIR 22 signature)."""
    from mlir.execution_engine import ExecutionEngine
    return ExecutionEngine(module, opt_level=opt_level, shared_libs=shared_libs,
                           enable_object_dump=True, enable_pic=pic)


# ORC (MLIR 22's ExecutionEngine) turns llvm.global_ctors/dtors -- the GPU
# module loading/unloading of gpu.binary -- into these functions of the
# object file it compiles; ``dump_to_object_file`` keeps them, but no
# .init_array, so an exported library must call them itself.
ORC_INIT_PREFIX = "__orc_init_func."
ORC_DEINIT_PREFIX = "__orc_deinit_func."


def initialize_engine(engine) -> None:
    """Runs the global constructors of an ExecutionEngine's module (loads
    the GPU binaries); MLIR 22 runs them only when asked."""
    engine.initialize()


def stub_engine_symbols(engine, names) -> list:
    """Resolves ``names`` to a do-nothing function in ``engine`` so that code
    referring to a runtime library that cannot be loaded here (the CUDA
    runtime without a driver) still compiles; never call into it.  Returns
    the ctypes objects to keep alive as long as the engine."""
    import ctypes
    keep = []
    for name in names:
        cb = ctypes.CFUNCTYPE(None)(lambda: None)
        keep.append(cb)
        engine.raw_register_runtime(name, ctypes.cast(cb, ctypes.c_void_p))
    return keep


def translate_to_llvm_ir(module) -> str:
    """``mlir-translate --mlir-to-llvmir`` of ``module`` (an LLVM-dialect
    module or its operation) without printing it and starting the tool: the
    LeNet step's 11 ms against 30 ms of printing plus ~100 ms of the
    process.  Raises ``mlir.ir.MLIRError``-like RuntimeError on failure.
    The native function itself: ``mlir.dialects.llvm`` would import its
    generated op classes first (14 ms) for nothing."""
    from mlir._mlir_libs._mlirDialectsLLVM import translate_module_to_llvmir
    op = module.operation if hasattr(module, "operation") else module
    return translate_module_to_llvmir(op)


_ENGINE_LOCK = threading.Lock()
_ENGINE_READY = False   # LLVM's native target registered (by a first engine)


class ReleasedEngine:
    """MLIR's ExecutionEngine over an LLVM-dialect module, created (LLVM's IR
    optimization) and looked up (code generation) with the GIL released.
    ``raw_lookup`` and ``dump_to_object_file`` as the bindings' engine."""

    def __init__(self, module: ir.Module, opt_level: int, shared_libs: list[str],
                 pic: bool = True):
        global _ENGINE_READY
        lib = _released_lib()
        _, ptr, string_ref = _capi_lib()
        self._lib = lib
        self._module = module       # the engine reads the module while it lives
        encoded = [s.encode() for s in shared_libs]
        refs = (string_ref * max(1, len(encoded)))(*[string_ref(s, len(s)) for s in encoded])
        raw = ptr(_CAPSULE_POINTER(module._CAPIPtr, _MODULE_CAPSULE))
        # The first engine of the process registers LLVM's native target
        # (a global list, not thread-safe): one at a time until that is done.
        if _ENGINE_READY:
            self._engine = lib.mlirExecutionEngineCreate(raw, opt_level, len(encoded), refs,
                                                         True, pic)
        else:
            with _ENGINE_LOCK:
                ready = _ENGINE_READY
                if not ready:
                    self._engine = lib.mlirExecutionEngineCreate(raw, opt_level, len(encoded),
                                                                 refs, True, pic)
                    _ENGINE_READY = True
            if ready:       # another thread's engine registered it meanwhile: no lock
                self._engine = lib.mlirExecutionEngineCreate(raw, opt_level, len(encoded), refs,
                                                             True, pic)
        if not self._engine.ptr:
            raise RuntimeError("ExecutionEngine could not be created (LLVM translation failed)")

    def raw_lookup(self, name: str) -> int:
        _, _, string_ref = _capi_lib()
        key = name.encode()
        return self._lib.mlirExecutionEngineLookupPacked(self._engine, string_ref(key, len(key))) \
            or 0

    def dump_to_object_file(self, path: str) -> None:
        _, _, string_ref = _capi_lib()
        key = str(path).encode()
        self._lib.mlirExecutionEngineDumpToObjectFile(self._engine, string_ref(key, len(key)))

    def __del__(self):
        engine = getattr(self, "_engine", None)
        if engine is not None and engine.ptr:
            self._lib.mlirExecutionEngineDestroy(engine)
            engine.ptr = None


def warm_up_llvm_targets_released() -> None:
    """Registers LLVM's native target with a tiny engine (the first engine
    of a process does), so engines created later in threads need no lock.
    Without the GIL (a thread runs it while the main thread splits the
    program): the engine's module lives in a context of its own, made and
    destroyed through the C API."""
    global _ENGINE_READY
    if _ENGINE_READY:
        return
    lib, _ = _raw_lib()
    engine_lib = _released_lib()
    _, _, string_ref = _capi_lib()
    ctx = lib.mlirContextCreateWithThreading(False)
    try:
        module = lib.mlirModuleCreateEmpty(lib.mlirLocationUnknownGet(ctx))
        try:
            with _ENGINE_LOCK:
                if not _ENGINE_READY:
                    engine = engine_lib.mlirExecutionEngineCreate(
                        module, 0, 0, (string_ref * 1)(), True, True)
                    if engine.ptr:
                        _ENGINE_READY = True
                        engine_lib.mlirExecutionEngineDestroy(engine)
        finally:
            lib.mlirModuleDestroy(module)
    finally:
        lib.mlirContextDestroy(ctx)
