"""Reductions -> ``linalg.reduce`` (sum, prod, max, min, and the sums inside
mean and collapse_sum_to) or a reduction ``linalg.generic`` (variance);
cumsum -> an ``scf.for`` over the scanned axis adding one slice at a time.

``keepdims`` is a ``tensor.expand_shape`` of the reduced tensor.  With
``rlx-to-linalg{sum-block=B}`` (the CPU pipeline uses 256), a float
sum of more than ``B`` elements is *blocked*, as numpy's pairwise
sum: each reduced axis longer than the block is cut into blocks of
``SUM_BLOCK`` that are summed first, then their partial sums are summed
(recursively), plus the tail; shorter reduced axes are summed innermost
first, several in one stage while together they hold at most ``SUM_BLOCK``
elements; so the rounding error grows with the log of
the length, not the length (2e7 x 0.1f sums to 2e6, not 2,097,152), and the
order is fixed (deterministic).  There, a summed innermost axis of at
least SUM_LANES_MIN elements is summed as SUM_LANES interleaved partial
sums, then those (``_lane_sum``: vectorizable loops); float max/min over
an innermost axis likewise (``_lane_extremum``).  max/min propagate NaN,
as numpy.  A variance whose sum goes leading axes first (batch norm's
statistics over (0, 2, 3) of NCHW), and a mean of the same x beside it,
come from one sweep over x (``moments``).

    %0 = "rlx.sum"(%x) {axis = array<i64: 1>} : (tensor<4x3xf32>) -> tensor<4xf32>
becomes
    %z = linalg.fill ins(%cst0) outs(tensor.empty() : tensor<4xf32>)
    %0 = linalg.reduce ins(%x) outs(%z) dimensions = [1] (%in, %acc) { arith.addf }
"""

from __future__ import annotations

import contextlib
import threading

from mlir import ir
from mlir.dialects import arith, scf

from ... import _compat
from ..._compat import linalg  # not mlir.dialects.linalg: see _compat.linalg
from ...dialects.infer import attributes_of
from .linalg_utils import (PARALLEL, REDUCTION, elementwise, elt_of, empty,
                           extract_slice, filled, generic, highest, identity_map, is_float,
                           index_value, insert_slice, lowest, normalize_axes, numel, one,
                           reduce_dims, reduction_axes, reshape, scalar_const, shape_of, zero)
from .registry import lowers

__all__ = ["reduce", "reduce_sum", "KINDS"]

# kind -> (initial value, combine(value, acc))
KINDS = {
    "sum": (zero, arith.addf),
    "prod": (one, arith.mulf),
    "max": (lowest, arith.maximumf),
    "min": (highest, arith.minimumf),
}


def reduce(x: ir.Value, dims, kind: str) -> ir.Value:
    """``linalg.reduce`` of ``x`` over ``dims`` (the result drops them)."""
    dims = sorted(set(dims))
    if not dims:
        return x
    init_fn, combine = KINDS[kind]
    shape = shape_of(x)
    elt = elt_of(x)
    out_shape = reduce_dims(shape, dims)
    init = filled(out_shape, elt, init_fn(elt))
    op = linalg.ReduceOp([init.type], [x], [init], dims)
    block = op.regions[0].blocks.append(elt, elt)
    with ir.InsertionPoint(block):
        linalg.YieldOp([combine(block.arguments[0], block.arguments[1])])
    return op.results[0]


# Elements summed sequentially before partial sums take over (0: never;
# set for one rlx-to-linalg run by ``sum_blocks``, its ``sum-block`` option).
# Per thread: gradir.compile lowers the parts of a program in threads at
# once (runtime/partition.py); a module-level value saved and restored by
# each run let one thread's restore reach another's run midway (sums left
# unblocked, or a division by zero).
_SUM_BLOCK = threading.local()


def sum_block() -> int:
    return getattr(_SUM_BLOCK, "value", 0)


@contextlib.contextmanager
def sum_blocks(block: int):
    saved, _SUM_BLOCK.value = sum_block(), block
    try:
        yield
    finally:
        _SUM_BLOCK.value = saved


def reduce_sum(x: ir.Value, dims) -> ir.Value:
    """Sum over ``dims``: one ``linalg.reduce`` when at most ``SUM_BLOCK``
    elements meet, else in stages from the innermost axis out: reduced axes
    whose elements together number at most ``SUM_BLOCK`` in one
    ``linalg.reduce`` (e.g. a conv bias gradient's 8x8 rows and columns),
    a longer axis blocked (``_blocked_sum``)."""
    SUM_BLOCK = sum_block()   # noqa: N806 - the module's constant, per thread
    dims = sorted(set(dims))
    shape = shape_of(x)
    if not SUM_BLOCK or not is_float(elt_of(x)):
        return reduce(x, dims, "sum")
    if _count(shape, dims) <= SUM_BLOCK:
        return _lane_sum(x, dims)
    lead = lead_axes(shape, dims)
    if lead:
        x = reduce_sum(x, lead)
        return reduce_sum(x, [d - len(lead) for d in dims if d not in lead])
    group: list[int] = []
    for d in reversed(dims):                  # innermost first; indices stay valid
        if group and _count(shape, group + [d]) > SUM_BLOCK:
            x = _lane_sum(x, group)
            group = []
        if shape[d] > SUM_BLOCK:
            x = _blocked_sum(x, d)
        else:
            group.append(d)
    return _lane_sum(x, group) if group else x


def lead_axes(shape, dims) -> list[int]:
    """The reduced axes before the first kept one, when ``reduce_sum``
    sums them first (else []).

    Those axes (the batch of an NCHW sum over (0, 2, 3): batch norm's
    statistics, a conv bias gradient) go first when the innermost axis is
    too short for lanes: their sums run along the contiguous rest
    (vectorized), where the innermost-first order ran a scalar chain over
    every element (issue 43: 32x32x32x32 f32 over (0, 2, 3), one thread,
    AMD EPYC Zen 5, load 9, min of 200: 0.31 -> 0.087 ms)."""
    dims = sorted(set(dims))
    lead = [d for i, d in enumerate(dims) if d == i]
    if (lead and len(lead) < len(dims) and dims[-1] == len(shape) - 1
            and shape[-1] < SUM_LANES_MIN):
        return lead
    return []


# Float sums over an innermost axis of at least SUM_LANES_MIN elements (the
# CPU pipeline's blocked sums) add that axis's elements in SUM_LANES
# interleaved partial sums first, then the partial sums: the loop over the
# axis is then not innermost (the loop over the lanes is, with nothing
# carried between its iterations: LLVM vectorizes it), where one sum per
# row ran as a scalar chain of dependent adds (LLVM keeps the order of float
# adds).  Row sums, f32, one thread, Intel Xeon AVX-512, min of runs:
# 256x1024 0.119 -> 0.041 ms, 4096x64 0.129 -> 0.057, 64x1000 (the tail
# of 232 summed alone) 0.034 -> 0.017.  Shorter rows stay one chain: 32
# elements split in two lanes' worth gained nothing measurable (NCHW sums
# over H and W of 32x32).
SUM_LANES = 16
SUM_LANES_MIN = 4 * SUM_LANES


def _lane_sum(x: ir.Value, dims) -> ir.Value:
    """``reduce(x, dims, "sum")``; when the innermost axis is summed and
    holds a multiple of SUM_LANES elements, at least SUM_LANES_MIN, as SUM_LANES
    interleaved partial sums (element ``i`` into lane ``i % SUM_LANES``),
    then the lanes."""
    shape = shape_of(x)
    last = len(shape) - 1
    n = shape[-1] if shape else 0
    if last not in dims or n < SUM_LANES_MIN or n % SUM_LANES:
        return reduce(x, dims, "sum")
    split = reshape(x, shape[:-1] + [n // SUM_LANES, SUM_LANES])
    lanes = reduce(split, list(dims), "sum")          # dims: last is now the row count
    return reduce(lanes, [len(shape_of(lanes)) - 1], "sum")


# max/min over a long innermost axis (CPU pipeline): MINMAX_LANES
# interleaved partial extrema, then those, for the same reason (one chain of
# dependent maximumf ran 8 lanes per ~10 cycles: GradBench lse's max of 80000
# f64 took a quarter of the call); any order gives the same result.
MINMAX_LANES = 32


def _lane_extremum(x: ir.Value, dims, kind: str) -> ir.Value:
    """``reduce(x, dims, kind)``; when the innermost axis is reduced and
    holds at least 4 MINMAX_LANES elements, its first multiple of
    MINMAX_LANES as that many interleaved partial extrema, then the lanes
    and the tail."""
    shape = shape_of(x)
    last = len(shape) - 1
    n = shape[-1] if shape else 0
    if last not in dims or n < 4 * MINMAX_LANES:
        return reduce(x, dims, kind)
    q, r = divmod(n, MINMAX_LANES)
    head = x if not r else extract_slice(x, [0] * len(shape), shape[:-1] + [q * MINMAX_LANES])
    split = reshape(head, shape[:-1] + [q, MINMAX_LANES])
    lanes = reduce(split, list(dims), kind)           # dims: last is now the row count
    out = reduce(lanes, [len(shape_of(lanes)) - 1], kind)
    if not r:
        return out
    tail = reduce(extract_slice(x, [0] * last + [q * MINMAX_LANES], shape[:-1] + [r]), dims, kind)
    return elementwise([out, tail], shape_of(out), elt_of(x), KINDS[kind][1])


def _blocked_sum(x: ir.Value, d: int) -> ir.Value:
    """Sum over axis ``d``: blocks of ``SUM_BLOCK`` summed first, their
    partial sums summed recursively, plus the tail."""
    SUM_BLOCK = sum_block()   # noqa: N806 - the module's constant, per thread
    shape = shape_of(x)
    n = shape[d]
    if n <= SUM_BLOCK:
        return reduce(x, [d], "sum")
    q, r = divmod(n, SUM_BLOCK)
    head = x
    if r:
        sizes = list(shape)
        sizes[d] = q * SUM_BLOCK
        head = extract_slice(x, [0] * len(shape), sizes)
    blocks = reshape(head, shape[:d] + [q, SUM_BLOCK] + shape[d + 1:])
    partial = _blocked_sum(_lane_sum(blocks, [d + 1]), d)
    if not r:
        return partial
    offsets = [0] * len(shape)
    offsets[d] = q * SUM_BLOCK
    sizes = list(shape)
    sizes[d] = r
    tail = _lane_sum(extract_slice(x, offsets, sizes), [d])
    return elementwise([partial, tail], shape_of(partial), elt_of(x), arith.addf)


def projected_map(rank: int, dims) -> ir.AffineMap:
    """``(d0..dn-1) -> (the loop dims not in dims)``."""
    return ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(i) for i in range(rank)
                                      if i not in set(dims)])


def _reduction_spec(op, x):
    rank = len(shape_of(x))
    attrs = attributes_of(op)
    axis = attrs.get("axis")
    dims = reduction_axes(axis, rank)
    return dims, attrs.get("keepdims", False)


def _finish(op, v):
    """Reshapes a reduced value to the op's result shape (keepdims)."""
    return reshape(v, shape_of(op.results[0].type))


def _simple(kind):
    def lower(op):
        x = op.operands[0]
        dims, _ = _reduction_spec(op, x)
        if kind == "sum":
            return [_finish(op, reduce_sum(x, dims))]
        if kind in ("max", "min") and sum_block() and is_float(elt_of(x)):
            return [_finish(op, _lane_extremum(x, dims, kind))]
        return [_finish(op, reduce(x, dims, kind))]
    return lower


for _kind in KINDS:
    lowers(f"rlx.{_kind}")(_simple(_kind))


def _count(shape, dims) -> int:
    return numel([shape[d] for d in dims])


def divide_by(v: ir.Value, n: int) -> ir.Value:
    """``v / n`` elementwise (a true division, as numpy's mean)."""
    elt = elt_of(v)
    shape = shape_of(v)
    return elementwise([v], shape, elt, lambda s: arith.divf(s, scalar_const(elt, n)))


@lowers("rlx.mean")
def lower_mean(op):
    x = op.operands[0]
    dims, _ = _reduction_spec(op, x)
    if _one_sweep(x, dims) and _variance_beside(x, dims):
        # the variance's sweep and mean (the same ops: cse merges them)
        return [_finish(op, moments(x, dims)[0])]
    return [_finish(op, divide_by(reduce_sum(x, dims), _count(shape_of(x), dims)))]


def centered_square_sum(x: ir.Value, mean: ir.Value, dims) -> ir.Value:
    """``sum((x - mean)^2)`` over ``dims``; ``mean`` has the reduced shape."""
    shape = shape_of(x)
    rank = len(shape)
    elt = elt_of(x)
    out_shape = reduce_dims(shape, dims)
    init = filled(out_shape, elt, 0)

    def body(v, m, acc):
        d = arith.subf(v, m)
        return [arith.addf(arith.mulf(d, d), acc)]

    return generic([x, mean], [init],
                   [identity_map(rank), projected_map(rank, dims), projected_map(rank, dims)],
                   [REDUCTION if i in set(dims) else PARALLEL for i in range(rank)], body)[0]


def _square(v):
    return arith.mulf(v, v)


# Mean and variance in one sweep (CPU pipeline; NCHW batch norm's
# statistics over (0, 2, 3)): where ``reduce_sum`` sums the leading axes
# first (``lead_axes``) and they hold at most SUM_BLOCK elements, one
# two-result linalg.generic reads x once and sums, per position p of the
# rest (c, h, w) over the leading axes (m elements), A = sum (x - k) and
# B = sum (x - k)^2, shifted by k = x at index 0 of the leading axes (a
# sample of the same position: B - A^2 / m, the position's sum of squared
# deviations, cancels no more than that sample's distance to the position's
# mean; an unshifted sum of squares of x = 1e4 + N(0, 1) in f32 loses the
# variance entirely).  The positions then merge (Chan et al.) on tensors m
# times smaller than x, relative to k0, the channel's first shift: with
# d_p = (k_p - k0) + A_p / m and dbar their mean over the channel, the mean
# is k0 + dbar and the variance (sum_p (B_p - A_p^2 / m) + m sum_p (d_p -
# dbar)^2) / n.  The loops run the kept axes before the rest outermost
# (channel, then batch, then h, w), so a channel's two rows of accumulators
# stay in L1.  rlx.mean of the same x and axes beside a variance is that
# mean (the same ops: cse merges them), so the statistics read x once,
# where the mean and the squared deviations about it took a sweep each.
# The mean's absolute error is then about an ulp of k0 (within the
# channel's spread), where the sum over n erred by n ulps of the mean.
# Relative error of the f32 variance vs float64: 1e4 + N(0, 1), 32x32x32x32
# (32x64x8x8) 4.4e-7 (4.7e-7), where the two sweeps gave 3.4e-6 (8.9e-6:
# the mean's rounding, squared); N(0, 1) 32x16x16x16 6.3e-7 (5.2e-7 before);
# torch.var 5e-8.  Mean and variance alone, one thread, AMD EPYC Zen 5, CPU
# time, min/median of 200 interleaved calls at load 8: 32x32x32x32 0.178/
# 0.182 -> 0.122/0.125 ms, 32x32x16x16 0.038/0.041 -> 0.033/0.034, 32x64x8x8
# 0.088/0.090 either way (its loops of 8 stay scalar); a third sum (the
# plain sum of x, to keep the mean's old bits) made it 0.150, 0.046 and
# 0.109 ms.
def _one_sweep(x, dims) -> bool:
    shape = shape_of(x)
    lead = lead_axes(shape, dims)
    return (bool(sum_block()) and is_float(elt_of(x)) and bool(lead)
            and _count(shape, dims) > sum_block() and _count(shape, lead) <= sum_block())


# The mark of a sweep's generic: its reduced axes (rlx.mean looks for it).
MOMENTS = "gradir.moments"


def _variance_beside(x, dims) -> bool:
    """Whether ``x`` has an rlx.variance over ``dims``, lowered or not."""
    for user, _ in _compat.uses_of(x):
        if user.name == "rlx.variance" and _reduction_spec(user, x)[0] == dims:
            return True
        if MOMENTS in user.attributes and list(ir.DenseI64ArrayAttr(
                user.attributes[MOMENTS])) == dims:
            return True
    return False


def _sweep_maps(shape, dims):
    """The maps of x and of the partial sums, and the iterators, of a sweep
    over the leading axes of ``dims``: loops over the kept axes before the
    first other reduced one, the leading axes, then the rest, in order."""
    rank = len(shape)
    lead = len(lead_axes(shape, dims))
    first = min(d for d in dims if d >= lead)
    order = list(range(lead, first)) + list(range(lead)) + list(range(first, rank))
    at = {axis: i for i, axis in enumerate(order)}
    x_map = ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(at[a]) for a in range(rank)])
    rest_map = ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(at[a]) for a in range(lead, rank)])
    return x_map, rest_map, [REDUCTION if order[i] < lead else PARALLEL for i in range(rank)]


def _shift_sums(x: ir.Value, dims) -> tuple[ir.Value, ir.Value, ir.Value]:
    """k, A and B (see above), A and B from one generic whose loops run the
    kept axes before the rest, the leading axes, the rest."""
    shape = shape_of(x)
    rank, elt = len(shape), elt_of(x)
    lead = len(lead_axes(shape, dims))
    rest = shape[lead:]
    k = reshape(extract_slice(x, [0] * rank, [1] * lead + rest), rest)
    x_map, rest_map, iterators = _sweep_maps(shape, dims)

    def body(v, kv, a, b):
        d = arith.subf(v, kv)
        return [arith.addf(d, a), arith.addf(_square(d), b)]

    a, b = generic([x, k], [filled(rest, elt, 0)] * 2, [x_map] + [rest_map] * 3, iterators, body)
    _compat.defining_op(a).attributes[MOMENTS] = ir.DenseI64ArrayAttr.get(list(dims))
    return k, a, b


def moments(x: ir.Value, dims) -> tuple[ir.Value, ir.Value]:
    """The mean and the population variance of ``x`` over ``dims`` (reduced
    shapes) from one sweep over ``x`` (``_one_sweep`` must hold)."""
    shape = shape_of(x)
    k, a, b = _shift_sums(x, dims)
    rest, elt = shape_of(a), elt_of(x)
    r = len(rest)
    m = _count(shape, lead_axes(shape, dims))
    pdims = [d - (len(shape) - r) for d in dims if d >= len(shape) - r]
    kept = reduce_dims(rest, pdims)
    k0 = reshape(extract_slice(k, [0] * r, [1 if i in pdims else d for i, d in enumerate(rest)]),
                 kept)
    pm, m_c = projected_map(r, pdims), scalar_const(elt, m)
    d = generic([k, k0, a], [empty(rest, elt)], [identity_map(r), pm] + [identity_map(r)] * 2,
                [PARALLEL] * r,
                lambda kv, k0v, av, _o: [arith.addf(arith.subf(kv, k0v), arith.divf(av, m_c))])[0]
    dbar = divide_by(reduce_sum(d, pdims), _count(rest, pdims))
    mean = elementwise([k0, dbar], kept, elt, arith.addf)

    def term(av, bv, dv, dbv, _o):
        within = arith.subf(bv, arith.mulf(av, arith.divf(av, m_c)))
        within = arith.maximumf(within, scalar_const(elt, 0))
        return [arith.addf(within, arith.mulf(m_c, _square(arith.subf(dv, dbv))))]

    terms = generic([a, b, d, dbar], [empty(rest, elt)],
                    [identity_map(r)] * 3 + [pm, identity_map(r)], [PARALLEL] * r, term)[0]
    return mean, divide_by(reduce_sum(terms, pdims), _count(shape, dims))


@lowers("rlx.variance")
def lower_variance(op):
    # Relax variance: the population variance mean((x - mean(x))^2).
    x = op.operands[0]
    dims, _ = _reduction_spec(op, x)
    if not dims:
        return [filled(shape_of(op.results[0].type), elt_of(x), 0)]
    n = _count(shape_of(x), dims)
    if _one_sweep(x, dims):
        return [_finish(op, moments(x, dims)[1])]
    mean = divide_by(reduce_sum(x, dims), n)
    if sum_block() and n > sum_block():
        # Blocked like every long sum (CPU pipeline): the squares summed by
        # reduce_sum, which fusion computes in its loops, where one
        # reduction generic ran one scalar chain of adds over every element
        # (issue 43: ResNet's stem batch norm, 32x32x32x32 f32 over (0, 2,
        # 3), one thread, AMD EPYC Zen 5, load 9, min of 200: 0.79 -> 0.17 ms
        # with reduce_sum's leading axes first).
        rank = len(shape_of(x))
        sq = generic([x, mean], [empty(shape_of(x), elt_of(x))],
                     [identity_map(rank), projected_map(rank, dims), identity_map(rank)],
                     [PARALLEL] * rank,
                     lambda v, m, _o: [_square(arith.subf(v, m))])[0]
        return [_finish(op, divide_by(reduce_sum(sq, dims), n))]
    return [_finish(op, divide_by(centered_square_sum(x, mean, dims), n))]


@lowers("rlx.collapse_sum_to")
def lower_collapse_sum_to(op):
    x = op.operands[0]
    shape = shape_of(x)
    target = shape_of(op.results[0].type)
    lead = len(shape) - len(target)
    dims = list(range(lead)) + [lead + i for i, d in enumerate(target)
                                if d == 1 and shape[lead + i] != 1]
    return [reshape(reduce_sum(x, dims), target)]


@lowers("rlx.cumsum")
def lower_cumsum(op):
    x = op.operands[0]
    axis = attributes_of(op).get("axis")
    if axis is None:  # Relax: the flattened input
        x = reshape(x, [numel(shape_of(x))])
        ax = 0
    else:
        ax = normalize_axes(axis, len(shape_of(x)))[0]
    shape = shape_of(x)
    elt = elt_of(x)
    rank = len(shape)
    n = shape[ax]
    if numel(shape) == 0:
        return [empty(shape, elt)]
    piece = list(shape)
    piece[ax] = 1

    def at(k):
        offsets = [0] * rank
        offsets[ax] = k
        return offsets

    out = insert_slice(extract_slice(x, at(0), piece), empty(shape, elt), at(0))
    if n > 1:
        loop = scf.ForOp(index_value(1), index_value(n), index_value(1), [out])
        with ir.InsertionPoint(loop.body):
            k = loop.induction_variable
            acc = loop.inner_iter_args[0]
            prev = extract_slice(acc, at(arith.subi(k, index_value(1))), piece)
            cur = extract_slice(x, at(k), piece)
            dest = extract_slice(acc, at(k), piece)
            s = generic([prev, cur], [dest], [identity_map(rank)] * 3, [PARALLEL] * rank,
                        lambda a, b, _o: [arith.addf(a, b)])[0]
            scf.YieldOp([insert_slice(s, acc, at(k))])
        out = loop.results[0]
    if attributes_of(op).get("exclusive", False):
        out = elementwise([out, x], shape, elt, arith.subf)
    return [out]
