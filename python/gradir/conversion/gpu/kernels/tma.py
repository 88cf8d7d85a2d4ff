"""TMA loads of the Hopper GEMMs' operands (``wgmma.py``): one
``cp.async.bulk.tensor.2d/3d.shared::cluster.global.mbarrier::complete_tx::bytes``
per operand slab, completed on an mbarrier per stage.

Which operands (``tma_operand``): those ``wgmma_pipeline`` copies with
cp.async (K innermost, rows and offset aligned to 16 bytes: TMA's
requirement on global strides and addresses, decided at compile time from
the static layout) with at most one batch dim, staged swizzled (the
tensor map's swizzle is the descriptors': 128B for rows of 128 bytes, 64B
for 64, 32B for 32; TMA has no interleaved core-matrix layout).

The tensor map (``encode``): a ``CUtensorMap`` the host encodes before
the launch with ``mgpuGradirTensorMap(base, dtype, swizzle, K, MN, batch,
row stride, batch stride, BK, rows)`` (``gradir_cuda_runtime.c``, through
``cuTensorMapEncodeTiled``): dims innermost first (K, M or N, batch),
strides in bytes, a box of one slab (BK x rows, one batch), elements past
the dims filled with zeros (so ragged M, N and K need no padded copy).
The kernel takes the map's device address (TMA reads it from global
memory): the runtime keeps one device copy per distinct map (a map is a
pure function of its parameters, so equal parameters share one copy,
encoded and copied once, freed at module unload), where nvcc would pass
the map by value as a 64-byte aligned ``__grid_constant__`` parameter,
which the gpu dialect's launches cannot express.

In the kernel (``wgmma._pipelined_k_loop``): thread 0 initializes one
mbarrier per stage (arrival count 1) before a barrier; issuing slab j into
stage s is, by thread 0, ``mbarrier.arrive.expect_tx`` of the stage's bytes
and one bulk tensor copy per operand (coordinates K, M or N, batch);
every thread waits for slab j with ``mbarrier.try_wait.parity`` on the
stage's barrier with parity ``(j / S) % 2`` (the stage's phases alternate)."""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, llvm, nvvm, scf

from ..common import index
from .common import Generic, if_
from .mma_pipeline import AsyncOperand, _descriptor, gep

__all__ = ["TmaOperand", "tma_operand", "encode", "init_barriers", "barrier_ptr",
           "expect_bytes", "copy_slab", "wait_slab", "RUNTIME_ENCODE"]

RUNTIME_ENCODE = "mgpuGradirTensorMap"
# CUtensorMapDataType and CUtensorMapSwizzle (cuda.h)
DATA_TYPE = {"f32": 7, "f16": 6, "bf16": 9}
SWIZZLE_ENUM = {32: 1, 64: 2, 128: 3}


def _i(width: int) -> ir.Type:
    return ir.IntegerType.get_signless(width)


@dataclass(frozen=True)
class TmaOperand:
    """An operand loaded with TMA: its cp.async plan, the memref dim of its
    batch (None: a plain matrix) and the batch loop dim."""
    plan: AsyncOperand
    batch_dim: int | None         # position in plan.dims
    batch_loop: int | None


def tma_operand(plan: AsyncOperand | None, lay) -> TmaOperand | None:
    """The TMA plan of a cp.async-copied operand, or None (cp.async)."""
    if plan is None or not lay.mode:
        return None
    others = [i for i, d in enumerate(plan.dims) if d not in (plan.k_dim, plan.mn_dim)]
    if len(others) > 1:
        return None
    bd = others[0] if others else None
    if bd is not None and plan.strides[bd] == 0:      # the map's rank comes from it
        return None
    return TmaOperand(plan=plan, batch_dim=bd,
                      batch_loop=plan.dims[bd] if bd is not None else None)


def _module_of(block: ir.Block) -> ir.Operation:
    op = block.owner
    while op.name != "builtin.module":
        op = op.parent
    return op


def _declare(module: ir.Operation) -> None:
    """``llvm.func @mgpuGradirTensorMap(!llvm.ptr, i64 x 9) -> !llvm.ptr``."""
    body = module.regions[0].blocks[0]
    for op in body.operations:
        if op.operation.name == "llvm.func" and \
                ir.StringAttr(op.operation.attributes["sym_name"]).value == RUNTIME_ENCODE:
            return
    ty = ir.Type.parse("!llvm.func<ptr (ptr, " + ", ".join(["i64"] * 9) + ")>")
    with ir.InsertionPoint.at_block_begin(body), ir.Location.unknown():
        fn = llvm.LLVMFuncOp(RUNTIME_ENCODE, ir.TypeAttr.get(ty))
        fn.attributes["sym_visibility"] = ir.StringAttr.get("private")


def encode(gen: Generic, op: TmaOperand, lay, rows: int, mn_extent: int, K: int,
           batch_extent: int) -> ir.Value:
    """Host ops before the launch: the device address of ``op``'s tensor
    map (see the module docstring)."""
    plan = op.plan
    _declare(_module_of(ir.InsertionPoint.current.block))
    i64 = _i(64)
    src = gen.inputs[plan.operand]
    ptr, offset = _descriptor(src)              # element 0 of the view
    base = gep(ptr, offset, src.type.element_type)
    strides = dict(zip(plan.dims, plan.strides))
    kind = str(src.type.element_type)
    row = strides[plan.mn_dim] * plan.esize
    bstride = strides[op.batch_loop] * plan.esize if op.batch_loop is not None else 0
    vals = [DATA_TYPE[kind], SWIZZLE_ENUM[lay.row_bytes], K, mn_extent,
            batch_extent if op.batch_loop is not None else 1, row, bstride, lay.bk, rows]
    args = [base] + [arith.constant(i64, v) for v in vals]
    return llvm.CallOp(ir.Type.parse("!llvm.ptr"), args, [], [],
                       callee=ir.FlatSymbolRefAttr.get(RUNTIME_ENCODE)).result


def barrier_ptr(bars_addr: ir.Value, stage: ir.Value) -> ir.Value:
    """A shared pointer to stage ``stage``'s mbarrier (8 bytes each)."""
    addr = arith.addi(bars_addr, arith.muli(stage, index(8)))
    return llvm.IntToPtrOp(ir.Type.parse("!llvm.ptr<3>"),
                           arith.index_cast(_i(64), addr)).result


def init_barriers(bars_addr: ir.Value, stages: int, tid: ir.Value) -> None:
    """Thread 0 initializes each stage's mbarrier with one arrival (the
    barrier after it orders the inits before every use)."""
    first = arith.cmpi(arith.CmpIPredicate.eq, tid, index(0))
    with ir.InsertionPoint(if_(first).then_block):
        one = arith.constant(_i(32), 1)
        for s in range(stages):
            nvvm.MBarrierInitOp(barrier_ptr(bars_addr, index(s)), one)
        nvvm.FenceMbarrierInitOp()          # the inits visible to the async proxy
        scf.YieldOp([])


def expect_bytes(bar: ir.Value, nbytes: int) -> None:
    """``mbarrier.arrive.expect_tx``: the stage's arrival and its bytes."""
    nvvm.MBarrierArriveExpectTxOp(None, bar, arith.constant(_i(32), nbytes))


def copy_slab(op: TmaOperand, tmap: ir.Value, dst_addr: ir.Value, bar: ir.Value,
              k0: ir.Value, mn0: ir.Value, bvals: dict) -> None:
    """The bulk tensor copy of one slab (box BK x rows at (k0, mn0[, b]))
    into the stage at shared address ``dst_addr``."""
    i32 = _i(32)
    coords = [arith.index_cast(i32, k0), arith.index_cast(i32, mn0)]
    if op.batch_loop is not None:
        coords.append(arith.index_cast(i32, bvals[op.batch_loop]))
    dst = llvm.IntToPtrOp(ir.Type.parse("!llvm.ptr<3>"),
                          arith.index_cast(_i(64), dst_addr)).result
    # the CTA's shared memory as a shared::cluster address (address space 7)
    dst = llvm.AddrSpaceCastOp(ir.Type.parse("!llvm.ptr<7>"), dst).result
    nvvm.CpAsyncBulkTensorGlobalToSharedClusterOp(dst, tmap, coords, bar, [])


def wait_slab(bar: ir.Value, j: ir.Value, stages: int) -> None:
    """Waits for the phase of stage ``j % stages`` that slab ``j``
    completes (parity ``(j / stages) % 2``)."""
    parity = arith.remui(arith.divui(j, index(stages)), index(2))
    nvvm.MBarrierTryWaitParityOp(bar, arith.index_cast(_i(32), parity),
                                 arith.constant(_i(32), 1000000))
