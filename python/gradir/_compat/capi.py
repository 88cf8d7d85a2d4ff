"""MLIR's C API, reached through ctypes where the Python bindings expose no
call (or hold the GIL through one): the bindings' ``libMLIRPythonCAPI.so``,
the C signatures gradir declares on it, and the capsule names the bindings
give their objects (``_CAPIPtr``).  A C function whose signature changes in
the next MLIR release is declared here only."""

from __future__ import annotations

import threading

from mlir import ir


def _capsule_pointer():
    import ctypes
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return get


_CAPSULE_POINTER = _capsule_pointer()
# The capsule name of each bindings object whose C handle gradir reads.
_OP_CAPSULE = b"mlir.ir.Operation._CAPIPtr"
_ATTR_CAPSULE = b"mlir.ir.Attribute._CAPIPtr"
_VALUE_CAPSULE = b"mlir.ir.Value._CAPIPtr"
_BLOCK_CAPSULE = b"mlir.ir.Block._CAPIPtr"
_PM_CAPSULE = b"mlir.passmanager.PassManager._CAPIPtr"
_MODULE_CAPSULE = b"mlir.ir.Module._CAPIPtr"
_CONTEXT_CAPSULE = b"mlir.ir.Context._CAPIPtr"
_REGISTRY_CAPSULE = b"mlir.ir.DialectRegistry._CAPIPtr"


def op_key(op) -> int:
    """The address of ``op`` (an Operation or OpView): a dictionary key that
    stays valid while the op lives.  MLIR 22's ``Operation.__hash__`` is
    structural (it changes when an operand is replaced), so the Python
    objects themselves are no stable keys."""
    return _CAPSULE_POINTER(op.operation._CAPIPtr, _OP_CAPSULE)


def value_key(value) -> int:
    """The address of ``value`` (an ``ir.Value``): a dictionary key that stays
    valid while the value lives (as ``op_key`` for ops)."""
    return _CAPSULE_POINTER(value._CAPIPtr, _VALUE_CAPSULE)


def _capi():
    import ctypes
    import os
    from mlir import _mlir_libs

    class Ptr(ctypes.Structure):            # MlirOperation, MlirAttribute
        _fields_ = [("ptr", ctypes.c_void_p)]

    class StringRef(ctypes.Structure):      # MlirStringRef
        _fields_ = [("data", ctypes.c_char_p), ("length", ctypes.c_size_t)]

    lib = ctypes.CDLL(os.path.join(os.path.dirname(_mlir_libs.__file__), "libMLIRPythonCAPI.so"))
    lib.mlirArrayAttrGetElement.argtypes = [Ptr, ctypes.c_ssize_t]
    lib.mlirArrayAttrGetElement.restype = Ptr
    lib.mlirOperationSetAttributeByName.argtypes = [Ptr, StringRef, Ptr]
    lib.mlirOperationSetAttributeByName.restype = None
    lib.mlirValueIsAOpResult.argtypes = [Ptr]
    lib.mlirValueIsAOpResult.restype = ctypes.c_bool
    lib.mlirOpResultGetOwner.argtypes = [Ptr]
    lib.mlirOpResultGetOwner.restype = Ptr
    for fn, args, res in (("mlirValueGetFirstUse", [Ptr], Ptr),
                          ("mlirOpOperandIsNull", [Ptr], ctypes.c_bool),
                          ("mlirOpOperandGetOwner", [Ptr], Ptr),
                          ("mlirOpOperandGetOperandNumber", [Ptr], ctypes.c_uint),
                          ("mlirOpOperandGetNextUse", [Ptr], Ptr),
                          ("mlirOperationGetParentOperation", [Ptr], Ptr),
                          ("mlirBlockGetFirstOperation", [Ptr], Ptr),
                          ("mlirOperationGetNextInBlock", [Ptr], Ptr),
                          ("mlirOperationGetNumResults", [Ptr], ctypes.c_ssize_t),
                          ("mlirOperationGetNumOperands", [Ptr], ctypes.c_ssize_t),
                          ("mlirOperationGetResult", [Ptr, ctypes.c_ssize_t], Ptr),
                          ("mlirOperationGetOperand", [Ptr, ctypes.c_ssize_t], Ptr),
                          ("mlirValueGetType", [Ptr], Ptr),
                          ("mlirTypeIsAVector", [Ptr], ctypes.c_bool),
                          ("mlirOperationClone", [Ptr], Ptr),
                          ("mlirAttributeIsADenseResourceElements", [Ptr], ctypes.c_bool),
                          ("mlirOperationGetBlock", [Ptr], Ptr),
                          ("mlirBlockInsertOwnedOperationBefore", [Ptr, Ptr, Ptr], None)):
        getattr(lib, fn).argtypes = args
        getattr(lib, fn).restype = res
    new_capsule = ctypes.pythonapi.PyCapsule_New
    new_capsule.restype = ctypes.py_object
    new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    lib.new_capsule = new_capsule
    return lib, Ptr, StringRef


def _capi_lib():
    global _CAPI
    if _CAPI is None:
        with _CAPI_LOCK:    # one set of ctypes types: threads compile at once (partition.py)
            if _CAPI is None:
                _CAPI = _capi()
    return _CAPI


_CAPI_LOCK = threading.Lock()
_CAPI = None


def _operation(lib, raw) -> ir.Operation | None:
    """The Python ``ir.Operation`` of a C API ``MlirOperation`` (None for null)."""
    if not raw.ptr:
        return None
    return ir.Operation._CAPICreate(lib.new_capsule(raw.ptr, _OP_CAPSULE, None))


# --- MLIR's C API with the GIL released (issue 14, parallel compile) ---
# The bindings' ``PassManager.run`` and ``ExecutionEngine`` hold the GIL for
# the whole pipeline / LLVM run, so two Python threads lowering two modules
# (each in its own context) take turns.  ctypes releases the GIL around a
# foreign call: the same C API functions called through ``ctypes.CDLL`` run
# at once on two cores.  A pass manager run this way must hold upstream
# passes only: a Python-defined pass called back without the GIL crashes.

_RELEASED = None
_DIAGNOSTIC_HANDLER = _STRING_CALLBACK = None     # ctypes callback types (_released_lib)


def _released_lib():
    global _RELEASED, _DIAGNOSTIC_HANDLER, _STRING_CALLBACK
    if _RELEASED is not None:
        return _RELEASED
    import ctypes
    lib, ptr, string_ref = _capi_lib()      # the argtypes set below are per CDLL object
    with _CAPI_LOCK:        # threads compile at once (partition.py): one set of types
        if _RELEASED is not None:
            return _RELEASED
        _DIAGNOSTIC_HANDLER, _STRING_CALLBACK = _diagnostic_types()
        fns = (("mlirPassManagerRunOnOp", [ptr, ptr], ctypes.c_int8),
               ("mlirExecutionEngineCreate",
                [ptr, ctypes.c_int, ctypes.c_int, ctypes.POINTER(string_ref), ctypes.c_bool,
                 ctypes.c_bool], ptr),
               ("mlirExecutionEngineDestroy", [ptr], None),
               ("mlirExecutionEngineLookupPacked", [ptr, string_ref], ctypes.c_void_p),
               ("mlirExecutionEngineDumpToObjectFile", [ptr, string_ref], None),
               ("mlirOperationGetContext", [ptr], ptr),
               ("mlirContextAttachDiagnosticHandler",
                [ptr, _DIAGNOSTIC_HANDLER, ctypes.c_void_p, ctypes.c_void_p], ctypes.c_uint64),
               ("mlirContextDetachDiagnosticHandler", [ptr, ctypes.c_uint64], None),
               ("mlirDiagnosticPrint", [ctypes.c_void_p, _STRING_CALLBACK, ctypes.c_void_p],
                None))
        for name, args, res in fns:
            getattr(lib, name).argtypes = args
            getattr(lib, name).restype = res
        _RELEASED = lib
    return _RELEASED


def _diagnostic_types():
    import ctypes
    _, _, string_ref = _CAPI
    # MlirLogicalResult (a struct of one int8) comes back in a register, as an
    # int8 does; MlirDiagnostic (a struct of one pointer) goes in as a pointer.
    return (ctypes.CFUNCTYPE(ctypes.c_int8, ctypes.c_void_p, ctypes.c_void_p),
            ctypes.CFUNCTYPE(None, string_ref, ctypes.c_void_p))


# The C API calls that make contexts and modules without the GIL (context.py).
_RAW = None


def _raw_lib():
    global _RAW
    if _RAW is not None:
        return _RAW
    import ctypes
    lib, ptr, string_ref = _capi_lib()
    with _CAPI_LOCK:
        if _RAW is None:
            for name, args, res in (
                    ("mlirContextCreateWithThreading", [ctypes.c_bool], ptr),
                    ("mlirContextAppendDialectRegistry", [ptr, ptr], None),
                    ("mlirContextLoadAllAvailableDialects", [ptr], None),
                    ("mlirRegisterAllLLVMTranslations", [ptr], None),
                    ("mlirContextDestroy", [ptr], None),
                    ("mlirLocationUnknownGet", [ptr], ptr),
                    ("mlirModuleCreateEmpty", [ptr], ptr),
                    ("mlirModuleCreateParse", [ptr, string_ref], ptr),
                    ("mlirModuleDestroy", [ptr], None),
                    ("mlirLoadIRDLDialects", [ptr], ctypes.c_int8)):
                getattr(lib, name).argtypes = args
                getattr(lib, name).restype = res
            new_capsule = ctypes.pythonapi.PyCapsule_New
            new_capsule.restype = ctypes.py_object
            new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
            _RAW = (lib, new_capsule)
    return _RAW
