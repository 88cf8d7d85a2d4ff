"""Device buffers that outlive a call (``gpu-device-buffers{keep-resident=...}``).

A resident argument of ``@f`` lives in a device buffer whose address is kept
in a host global, ``@__gradir_resident_<f>_<i>`` (an ``i64``, 0 until the
first upload).  ``@f`` uploads the argument only when the global is 0; a
generated public function ``@<f>_upload_resident(args...)`` (one argument per
resident index, in order) copies new values into the device buffers.

The device address is turned back into a memref by building its LLVM
descriptor and an ``unrealized_conversion_cast`` that the LLVM lowering
folds away (the memref dialect cannot build a memref from a pointer).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, builtin, func, gpu, llvm, memref, scf

from ...ir import symbol_name

__all__ = ["resident_global_name", "resident_buffer", "persistent_buffer", "upload_function",
           "UPLOAD_SUFFIX"]

UPLOAD_SUFFIX = "_upload_resident"


def resident_global_name(fn_name: str, index: int) -> str:
    return f"__gradir_resident_{fn_name}_{index}"


def _ptr_type() -> ir.Type:
    return ir.Type.parse("!llvm.ptr")


def _descriptor_type(rank: int) -> ir.Type:
    arrays = f", array<{rank} x i64>, array<{rank} x i64>" if rank else ""
    return ir.Type.parse(f"!llvm.struct<(ptr, ptr, i64{arrays})>")


def _i64(v: int) -> ir.Value:
    return arith.ConstantOp(ir.IntegerType.get_signless(64), v).result


def _global_op(name: str) -> ir.Operation:
    return ir.Operation.parse(f"llvm.mlir.global internal @{name}(0 : i64) : i64")


def _address(name: str) -> ir.Value:
    return llvm.AddressOfOp(_ptr_type(), name).result


def _memref_at(address: ir.Value, t: ir.MemRefType) -> ir.Value:
    """A memref of type ``t`` (identity layout) whose data is at the device
    address held in ``address`` (an i64)."""
    rank = len(t.shape)
    desc = llvm.UndefOp(_descriptor_type(rank)).result
    ptr = llvm.IntToPtrOp(_ptr_type(), address).result
    desc = llvm.InsertValueOp(desc, ptr, [0]).result
    desc = llvm.InsertValueOp(desc, ptr, [1]).result
    desc = llvm.InsertValueOp(desc, _i64(0), [2]).result
    stride = 1
    strides = []
    for n in reversed(t.shape):
        strides.append(stride)
        stride *= n
    strides.reverse()
    for d in range(rank):
        desc = llvm.InsertValueOp(desc, _i64(t.shape[d]), [3, d]).result
        desc = llvm.InsertValueOp(desc, _i64(strides[d]), [4, d]).result
    return builtin.UnrealizedConversionCastOp([t], [desc]).result


def _ensure_allocated(name: str, t: ir.MemRefType, upload_from: ir.Value | None):
    """At the insertion point: if the global is 0, allocate the device buffer
    (and copy ``upload_from`` into it) and store its address."""
    addr = _address(name)
    current = llvm.LoadOp(ir.IntegerType.get_signless(64), addr).result
    fresh = arith.cmpi(arith.CmpIPredicate.eq, current, _i64(0))
    branch = scf.IfOp(fresh, [], has_else=False)
    with ir.InsertionPoint(branch.then_block):
        dev = gpu.AllocOp(t, None, [], [], []).result
        if upload_from is not None:
            gpu.MemcpyOp(None, [], dev, upload_from)
        base = memref.ExtractAlignedPointerAsIndexOp(dev).result
        as_int = arith.index_cast(ir.IntegerType.get_signless(64), base)
        llvm.StoreOp(as_int, _address(name))
        scf.YieldOp([])
    return branch


def persistent_buffer(name: str, t: ir.MemRefType, upload_from: ir.Value | None = None):
    """At the insertion point: a device buffer of type ``t`` allocated by the
    first call only (its address in the i64 global @name; ``upload_from`` is
    copied into it then).  Returns ``(device memref, global op to add to
    the module)``."""
    _ensure_allocated(name, t, upload_from)
    address = llvm.LoadOp(ir.IntegerType.get_signless(64), _address(name)).result
    return _memref_at(address, t), _global_op(name)


def resident_buffer(fn: ir.Operation, index: int, arg: ir.Value):
    """At the insertion point of ``fn``'s entry: the device buffer of a
    resident argument (uploaded from ``arg`` on the first call).  Returns
    ``(device memref, global op to add to the module)``."""
    fn_name = symbol_name(fn)
    return persistent_buffer(resident_global_name(fn_name, index), arg.type, arg)


def upload_function(fn: ir.Operation, indices: list[int]) -> ir.Operation:
    """``@<f>_upload_resident(host memrefs of the resident args)``: copies
    them into the device buffers (allocating them if needed).  Inserted at
    the current insertion point (the module body)."""
    fn_name = symbol_name(fn)
    args = fn.regions[0].blocks[0].arguments
    types = [args[i].type for i in indices]
    new = func.FuncOp(fn_name + UPLOAD_SUFFIX, (types, []))
    new.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
    entry = new.add_entry_block()
    with ir.InsertionPoint(entry):
        for i, host in zip(indices, entry.arguments):
            name = resident_global_name(fn_name, i)
            _ensure_allocated(name, host.type, None)
            address = llvm.LoadOp(ir.IntegerType.get_signless(64), _address(name)).result
            dev = _memref_at(address, host.type)
            gpu.MemcpyOp(None, [], dev, host)
        func.ReturnOp([])
    return new
