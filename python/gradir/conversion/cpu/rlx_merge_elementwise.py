"""rlx-merge-elementwise: an elementwise generic whose result several ops read
computed inside its elementwise consumer, as a second result of one loop nest.

``linalg-fuse-elementwise-ops`` fuses a producer into its consumer only when
the consumer is its one user; a producer read by others is written out and
the consumer reads it back.  Batch norm's forward in a gradient program is
such a chain: ``x - mean`` (kept for the backward), ``(x - mean) * s + beta``
(kept for relu's backward), ``relu`` (kept for the next convolution), three
loops over the tensor, each reading the last one's result.  Here such a
producer joins its consumer: the consumer's loop computes the producer's
value from the producer's operands and yields it as an extra result (the
producer's other users read that), so the chain is one loop reading ``x``
once and writing each kept value:

    %p = linalg.generic {maps = [id, (0,d1,0,0), id]} ins(%x, %m) outs(%e0)
           { %d = arith.subf %in, %in_1 ; linalg.yield %d }
    %c = linalg.generic {maps = [id, (0,d1,0,0), id]} ins(%p, %s) outs(%e1)
           { %y = arith.mulf %in, %in_1 ; linalg.yield %y }
    ... (other users of %p, after %c)
becomes
    %r:2 = linalg.generic {maps = [id, (0,d1,0,0), (0,d1,0,0), id, id]}
           ins(%x, %m, %s) outs(%e0, %e1)
           { %d = arith.subf %in, %in_1 ; %y = arith.mulf %d, %in_2 ; linalg.yield %d, %y }

Each element is the same chain of operations as before (the same bits).
Only all-parallel generics on static tensors over the same loops, the
producer's result and the consumer's results indexed by the identity, the
consumer reading the producer through the identity, and every other user of
the producer after the consumer (the merged op takes the consumer's place);
neither body reads its loop indices; either op carrying a discardable
attribute (``grad.recomputed``: a recomputation that must stay apart) stays.
Run after elementwise fusion, before ``rlx-collapse-elementwise``."""

from __future__ import annotations

from mlir import ir
from mlir.dialects import linalg, tensor

from ... import _compat
from ...passes.base import ModulePass

__all__ = ["RlxMergeElementwise"]

_STRUCTURAL = {"indexing_maps", "iterator_types", "operandSegmentSizes"}


def _maps(op) -> list:
    return [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]


def _identity(m: ir.AffineMap, n: int) -> bool:
    if m.n_dims != n or len(m.results) != n:
        return False
    for i, e in enumerate(m.results):
        if not isinstance(e, ir.AffineDimExpr) or ir.AffineDimExpr(e).position != i:
            return False
    return True


def _n_inputs(op) -> int:
    return len(op.operands) - len(op.results)


def _elementwise(op) -> bool:
    """An all-parallel generic on static tensors, its results indexed by the
    identity, no loop index read, no discardable attribute."""
    if op.name != "linalg.generic" or not op.results:
        return False
    attrs = {a if isinstance(a, str) else a.name for a in op.attributes}
    if attrs - _STRUCTURAL:
        return False
    its = [str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"])]
    if not its or any("parallel" not in a for a in its):
        return False
    if not all(isinstance(v.type, ir.RankedTensorType)
               and ir.RankedTensorType(v.type).has_static_shape for v in op.operands):
        return False
    maps = _maps(op)
    n = len(its)
    if not all(_identity(m, n) for m in maps[_n_inputs(op):]):
        return False
    return not _compat.collect_ops(op, lambda o: o.name == "linalg.index")


def _in_block_after(user: ir.Operation, anchor: ir.Operation) -> bool:
    """Whether ``user`` (or its ancestor in ``anchor``'s block) comes after ``anchor``."""
    block = anchor.block
    op = user
    while op is not None and op.block != block:
        op = _compat.parent_op(op)
    return op is not None and op != anchor and anchor.is_before_in_block(op)


_key = _compat.value_key


def _candidate(c, elementwise) -> tuple | None:
    """(producer, {consumer input position: producer result}) for consumer
    ``c``; ``elementwise(op)``: ``_elementwise`` (memoized by the caller).
    The consumer's inputs are indexed once (value -> positions), each
    producer tried once: a gradient's fused backward reads every forward
    value of one merged op, and comparing each input with each result of
    each producer was cubic along the chain."""
    if not elementwise(c):
        return None
    n = len(ir.ArrayAttr(c.attributes["iterator_types"]))
    shape = list(ir.RankedTensorType(c.results[0].type).shape)
    cmaps = _maps(c)
    n_in = _n_inputs(c)
    operands = list(c.operands)
    positions: dict[int, list[int]] = {}
    for j in range(n_in):
        positions.setdefault(_key(operands[j]), []).append(j)
    inits = {_key(v) for v in operands[n_in:]}
    tried = set()
    for i in range(n_in):
        p = _compat.defining_op(operands[i])
        if p is None or p == c or p.block != c.block:
            continue
        pk = _compat.op_key(p)
        if pk in tried:
            continue
        tried.add(pk)
        if not elementwise(p):
            continue
        if len(ir.ArrayAttr(p.attributes["iterator_types"])) != n \
                or list(ir.RankedTensorType(p.results[0].type).shape) != shape:
            continue
        results = [_key(r) for r in p.results]
        reads = {j: r for r, rk in enumerate(results) for j in positions.get(rk, ())}
        if not all(_identity(cmaps[j], n) for j in reads):
            continue
        if any(rk in inits for rk in results):
            continue   # (the consumer writing into the producer's result)
        others = [u for r in p.results for u, _ in _compat.uses_of(r) if u != c]
        if not others:
            continue   # elementwise fusion's case (the consumer its one user)
        if not all(_in_block_after(u, c) for u in others):
            continue
        return p, dict(sorted(reads.items()))
    return None


def _merge(p, c, reads: dict):
    """One generic at ``c``'s place yielding ``p``'s results, then ``c``'s;
    returns it."""
    np_in, nc_in = _n_inputs(p), _n_inputs(c)
    np_out, nc_out = len(p.results), len(c.results)
    kept = [j for j in range(nc_in) if j not in reads]
    pmaps, cmaps = _maps(p), _maps(c)
    ins = [p.operands[i] for i in range(np_in)] + [c.operands[j] for j in kept]
    c_inits = [c.operands[nc_in + k] for k in range(nc_out)]
    maps = ([pmaps[i] for i in range(np_in)] + [cmaps[j] for j in kept]
            + pmaps[np_in:] + cmaps[nc_in:])
    with ir.InsertionPoint(c), c.location:
        p_inits = []
        for k in range(np_out):
            v = p.operands[np_in + k]
            owner = _compat.defining_op(v)
            if v in c_inits or v in p_inits or owner is None or owner.name != "tensor.empty":
                # (each result its own buffer: one init shared by two results
                # would make bufferization copy)
                t = ir.RankedTensorType(v.type)
                v = tensor.EmptyOp(list(t.shape), t.element_type).result
            p_inits.append(v)
        types = [r.type for r in p.results] + [r.type for r in c.results]
        new = linalg.GenericOp(types, ins, p_inits + c_inits,
                               ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
                               c.attributes["iterator_types"])
    pb, cb = p.regions[0].blocks[0], c.regions[0].blocks[0]
    arg_types = ([pb.arguments[i].type for i in range(np_in)]
                 + [cb.arguments[j].type for j in kept]
                 + [pb.arguments[np_in + k].type for k in range(np_out)]
                 + [cb.arguments[nc_in + k].type for k in range(nc_out)])
    block = new.regions[0].blocks.append(*arg_types)
    args = list(block.arguments)
    n_ins = np_in + len(kept)
    for i in range(np_in):
        pb.arguments[i].replace_all_uses_with(args[i])
    for k in range(np_out):
        pb.arguments[np_in + k].replace_all_uses_with(args[n_ins + k])
    ip = ir.InsertionPoint(block)
    p_ops = list(_compat.block_ops(pb))
    values = list(p_ops[-1].operands)
    for o in p_ops[:-1]:
        o.detach_from_parent()
        ip.insert(o)
    for pos, j in enumerate(kept):
        cb.arguments[j].replace_all_uses_with(args[np_in + pos])
    for j, r in reads.items():
        cb.arguments[j].replace_all_uses_with(values[r])
    for k in range(nc_out):
        cb.arguments[nc_in + k].replace_all_uses_with(args[n_ins + np_out + k])
    c_ops = list(_compat.block_ops(cb))
    yields = values + list(c_ops[-1].operands)
    for o in c_ops[:-1]:
        o.detach_from_parent()
        ip.insert(o)
    with ip, c.location:
        linalg.YieldOp(yields)
    for k, r in enumerate(c.results):
        r.replace_all_uses_with(new.results[np_out + k])
    c.erase()
    for k, r in enumerate(p.results):
        r.replace_all_uses_with(new.results[k])
    p.erase()
    return new.operation


class RlxMergeElementwise(ModulePass):
    """Computes a multi-use elementwise producer inside its elementwise
    consumer as an extra result (module docstring)."""

    name = "rlx-merge-elementwise"

    def apply(self, module: ir.Operation) -> None:
        # One sweep over the generics in program order; a merged op takes
        # its consumer's place in the sweep and is tried again as a consumer
        # at once.  A merge moves the producer's operand reads down to the
        # consumer, which can make an earlier op a candidate: sweeps repeat
        # until one merges nothing (a second sweep, in practice).  Restarting
        # the walk after each merge, as before, was quadratic: 6.8 s of
        # torchvision's shufflenet_v2_x0_5 gradient's 20 s CPU pipeline.
        memo: dict[int, bool] = {}

        def elementwise(op) -> bool:
            key = _compat.op_key(op)
            if key not in memo:
                memo[key] = _elementwise(op)
            return memo[key]

        changed = True
        while changed:
            changed = False
            erased: set[int] = set()
            for c in _compat.collect_ops(module, lambda o: o.name == "linalg.generic"):
                if _compat.op_key(c) in erased:
                    continue
                while (found := _candidate(c, elementwise)) is not None:
                    p = found[0]
                    keys = (_compat.op_key(p), _compat.op_key(c))
                    c = _merge(p, c, found[1])
                    # (an erased op's address may be a later op's: forget it)
                    for key in keys:
                        memo.pop(key, None)
                    erased.update(keys)
                    erased.discard(_compat.op_key(c))
                    changed = True
