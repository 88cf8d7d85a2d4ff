"""One thread per output element: all-parallel generics, and the serial
fallback for reductions (a loop nest over the reduction dims per thread).

Thread x runs along the innermost parallel dimension (coalesced accesses);
the grid covers every output element, bounds checked when the block size does
not divide the element count."""

from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import arith, gpu, memref, scf

from ..common import index
from .common import (Cloner, Generic, KernelContext, apply_map, const, delinearize, if_,
                     launch, load_operand, ult)

__all__ = ["build_elementwise"]


def build_elementwise(ctx: KernelContext, gen: Generic) -> None:
    """A ``gpu.launch`` with one thread per point of ``gen``'s parallel space."""
    prange = [gen.ranges[d] for d in gen.parallel]
    total = math.prod(prange)
    if total == 0:
        return
    threads = min(ctx.options.block_size, total)
    if threads > 32:
        threads = (threads + 31) // 32 * 32
    blocks = -(-total // threads)
    _, body, ids, _ = launch([blocks], [threads],
                             name=ctx.namer("reduce_serial" if gen.reduction else "map"))
    with ir.InsertionPoint(body):
        bx, tx = ids[0], ids[3]
        gid = tx if blocks == 1 else arith.addi(arith.muli(bx, index(threads)), tx)
        inner = body
        if blocks * threads != total:
            guard = if_(ult(gid, total))
            inner = guard.then_block
        with ir.InsertionPoint(inner):
            _serial_body(gen, gen.dims(parallel=delinearize(gid, prange)))
            if inner is not body:
                scf.YieldOp([])
        gpu.TerminatorOp()


def _serial_body(gen: Generic, dims: list) -> None:
    """Loads, the body (in serial loops over the reduction dims) and stores,
    for the parallel coordinates in ``dims``."""
    n_in = len(gen.inputs)
    outer = [d if d is not None else index(0) for d in dims]
    outs = []
    for j, out in enumerate(gen.outputs):
        k = n_in + j
        idx = apply_map(gen.maps[k], outer)
        needs = gen.used(k) or bool(gen.reduction)
        if needs and gen.zero_init:
            value = const(out.type.element_type, 0)
        else:
            value = memref.LoadOp(out, idx).result if needs else None
        outs.append((idx, value))
    if not gen.reduction:
        ins = [load_operand(gen, k, dims) if gen.used(k) else None for k in range(n_in)]
        results = Cloner.body(gen, ins + [v for _, v in outs], dims)
    else:
        results = _reduction_loops(gen, dims, 0, [v for _, v in outs])
    for (idx, _), value, out in zip(outs, results, gen.outputs):
        memref.StoreOp(value, out, idx)


def _reduction_loops(gen: Generic, dims: list, level: int, accs: list) -> list:
    """The loop over reduction dim ``level`` (and the ones inside it), carrying
    the accumulators ``accs``; returns their final values."""
    if level == len(gen.reduction):
        n_in = len(gen.inputs)
        ins = [load_operand(gen, k, dims) if gen.used(k) else None for k in range(n_in)]
        return Cloner.body(gen, ins + accs, dims)
    d = gen.reduction[level]
    loop = scf.ForOp(index(0), index(gen.ranges[d]), index(1), accs)
    with ir.InsertionPoint(loop.body):
        dims = list(dims)
        dims[d] = loop.induction_variable
        res = _reduction_loops(gen, dims, level + 1, list(loop.inner_iter_args))
        scf.YieldOp(res)
    return list(loop.results)
