"""Max pooling with saved arg-max indices -> linalg.

- max_pool2d_with_indices -> the pooled values as ``max_pool2d`` lowers them,
  and each window's first-maximum position (i32) from the arg-max generics
  of ``max_pool2d_backward``'s lowering (``pooling._argmax_unrolled``,
  ``pooling._argmax``);
- max_pool2d_indices_backward -> ``max_pool2d_backward``'s gather
  (``pooling._gather_backward``; windows over UNROLLED_WINDOW elements:
  ``pooling._scatter``) reading the saved positions instead of computing them:
  the same positions summed in the same order, the same bits;
- with ``pool_kernels`` (``rlx-to-linalg{pool-kernels=true}``) the pools the
  pooling kernels take (2x2 windows of stride 2; 3x3 of stride 2 and padding
  1 over even rows and columns) become ``linalg.generic {gradir.kernel =
  "max_pool2x2_indices"}`` (``"max_pool3x3s2_indices"``: of the input padded
  with -inf) writing the values and the positions, and ``{gradir.kernel =
  "max_pool2x2_backward_indices"}`` (``"max_pool3x3s2_backward_indices"``)
  over the input gradient reading the output gradient (through a
  ``linalg.copy``) and the positions, each in an ``scf.execute_region
  no_inline`` (the form ``rlx-pool-kernels`` turns into kernel calls,
  ``pool_index_kernels.py``; without it their loops compute the same bits).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith

from ... import _compat
from ..._compat import linalg
from .linalg_utils import (PARALLEL, elt_of, empty, generic, identity_map, index_value,
                           scalar_const, shape_of, zero)
from .pooling import (_TAPS3, _WINDOWS3, _Pool, _argmax, _argmax_unrolled, _beats, _exact,
                      _gather_backward, _hit, _kernel_pool, _kernel_pool3, _scatter_argmax,
                      _unrolled, lower_max_pool2d)
from .registry import lowers

_I32 = lambda: ir.IntegerType.get_signless(32)  # noqa: E731 - needs a context


def _region(types):
    """An empty ``scf.execute_region no_inline`` with results ``types``, and its block."""
    region = ir.Operation.create("scf.execute_region", results=list(types),
                                 attributes={"no_inline": ir.UnitAttr.get()}, regions=1)
    return region, region.regions[0].blocks.append()


@lowers("rlx.max_pool2d_with_indices")
def lower_max_pool2d_with_indices(op):
    x = op.operands[0]
    out_shape = shape_of(op.results[0].type)
    p = _Pool(op, shape_of(x), out_shape[2:])
    elt = elt_of(x)
    if _kernel_pool(p, elt):
        return _kernel_forward(x, p, out_shape, elt, 2, "max_pool2x2_indices")
    if _kernel_pool3(p, elt):
        return _kernel_forward(p.padded(x, float("-inf")), p, out_shape, elt, 3,
                               "max_pool3x3s2_indices")
    y = lower_max_pool2d(op)[0]
    xp = p.padded(x, float("-inf"))
    if _unrolled(p):
        return [y, _argmax_unrolled(xp, p, out_shape)]
    arg = _argmax(xp, p, out_shape)
    idx = generic([arg], [empty(out_shape, _I32())], [identity_map(4)] * 2, [PARALLEL] * 4,
                  lambda a, _o: [arith.index_cast(_I32(), a)])[0]
    return [y, idx]


def _first_max(vals, elt):
    """The maximum (``arith.maximumf``) of ``vals`` and the position (i32)
    of the first maximum (``pooling._beats`` from -inf, 0 when none beats it)."""
    i32 = _I32()
    m = vals[0]
    for v in vals[1:]:
        m = arith.maximumf(m, v)
    best, arg = scalar_const(elt, float("-inf")), arith.constant(i32, 0)
    for pos, v in enumerate(vals):
        greater = _beats(v, best)
        best = arith.select(greater, v, best)
        arg = arith.select(greater, arith.constant(i32, pos), arg)
    return m, arg


def _kernel_forward(xp, p, out_shape, elt, k, kind):
    """``linalg.generic {gradir.kernel = kind}`` over the output reading the
    ``k`` x ``k`` windows of stride 2 of ``xp`` (``k * k`` maps), writing
    the maximum and its position, in an ``scf.execute_region no_inline``
    (fusion leaves it alone)."""
    d = [ir.AffineDimExpr.get(i) for i in range(4)]
    maps = [ir.AffineMap.get(4, 0, [d[0], d[1], d[2] * 2 + ky, d[3] * 2 + kx])
            for ky in range(k) for kx in range(k)]
    types = [ir.RankedTensorType.get(out_shape, elt), ir.RankedTensorType.get(out_shape, _I32())]
    region, block = _region(types)
    with ir.InsertionPoint(block):
        y, idx = generic([xp] * (k * k), [empty(out_shape, elt), empty(out_shape, _I32())],
                         maps + [identity_map(4)] * 2, [PARALLEL] * 4,
                         lambda *v: list(_first_max(v[:k * k], elt)))
        _compat.defining_op(y).attributes["gradir.kernel"] = ir.StringAttr.get(kind)
        ir.Operation.create("scf.yield", operands=[y, idx])
    return [region.results[0], region.results[1]]


@lowers("rlx.max_pool2d_indices_backward")
def lower_max_pool2d_indices_backward(op):
    grad, idx = op.operands
    shape = shape_of(op.results[0].type)
    p = _Pool(op, shape, shape_of(grad)[2:])
    elt = elt_of(grad)
    if _exact(p) and _kernel_pool(p, elt):
        return [_kernel_backward2(grad, idx, p, elt)]
    if _kernel_pool3(p, elt):
        return [_kernel_backward3(grad, idx, p, elt)]
    if _unrolled(p):
        return [_gather_backward(p, grad, idx, shape, elt,
                                 lambda g, a, pos: _hit(a, arith.constant(a.type, pos), g, elt))]
    arg = generic([idx], [empty(shape_of(idx), ir.IndexType.get())], [identity_map(4)] * 2,
                  [PARALLEL] * 4, lambda a, _o: [arith.index_cast(ir.IndexType.get(), a)])[0]
    return [_scatter_argmax(p, grad, arg, shape, elt)]


def _kernel_backward(grad, idx, shape, elt, kind, maps, value):
    """``linalg.generic {gradir.kernel = kind}`` over the input gradient
    (``shape``) reading the output gradient through a ``linalg.copy`` and
    the positions, through ``maps`` (gradient maps then index maps, as many
    each), and yielding ``value(gradients, positions)``; in an
    ``scf.execute_region no_inline`` (as ``pooling._kernel_backward``)."""
    n = len(maps) // 2
    region, block = _region([ir.RankedTensorType.get(shape, elt)])
    with ir.InsertionPoint(block):
        g = linalg.copy(grad, outs=[empty(shape_of(grad), elt)])
        (dx,) = generic([g] * n + [idx] * n, [empty(shape, elt)], maps + [identity_map(4)],
                        [PARALLEL] * 4, lambda *v: [value(v[:n], v[n:2 * n])])
        _compat.defining_op(dx).attributes["gradir.kernel"] = ir.StringAttr.get(kind)
        ir.Operation.create("scf.yield", operands=[dx])
    return region.results[0]


def _kernel_backward2(grad, idx, p, elt):
    """2x2 windows of stride 2 tiling the input: each element takes its
    window's gradient where the saved position is its own."""
    d = [ir.AffineDimExpr.get(i) for i in range(4)]
    two = ir.AffineConstantExpr.get(2)
    window = ir.AffineMap.get(4, 0, [d[0], d[1], ir.AffineFloorDivExpr.get(d[2], two),
                                     ir.AffineFloorDivExpr.get(d[3], two)])

    def value(gs, idxs):
        two_i = index_value(2)
        own = arith.addi(arith.muli(arith.remui(linalg.IndexOp(2).result, two_i), two_i),
                         arith.remui(linalg.IndexOp(3).result, two_i))
        return _hit(idxs[0], arith.index_cast(_I32(), own), gs[0], elt)

    return _kernel_backward(grad, idx, p.shape, elt, "max_pool2x2_backward_indices",
                            [window, window], value)


def _kernel_backward3(grad, idx, p, elt):
    """3x3 windows of stride 2 and padding 1 (``pooling._TAPS3``): input row
    2q + py, column 2t + px sums the gradients of its windows whose saved
    position is its own, in ``_gather_backward``'s order; a window past the
    last (row q + 1 = Ho or column t + 1 = Wo: read modulo, masked) adds
    +0, as the zero-padded gradient does there."""
    ho, wo = p.out
    d = [ir.AffineDimExpr.get(i) for i in range(4)]
    two, one = ir.AffineConstantExpr.get(2), ir.AffineConstantExpr.get(1)
    wy = {"lo": ir.AffineFloorDivExpr.get(d[2], two),
          "hi": ir.AffineFloorDivExpr.get(d[2] + one, two) % ho}
    wx = {"lo": ir.AffineFloorDivExpr.get(d[3], two),
          "hi": ir.AffineFloorDivExpr.get(d[3] + one, two) % wo}
    maps = [ir.AffineMap.get(4, 0, [d[0], d[1], wy[a], wx[b]]) for a, b in _WINDOWS3]

    def value(gs, idxs):
        row, col = linalg.IndexOp(2).result, linalg.IndexOp(3).result
        ok = {"lo": (None, None),
              "hi": (arith.cmpi(arith.CmpIPredicate.ult, row, index_value(2 * ho - 1)),
                     arith.cmpi(arith.CmpIPredicate.ult, col, index_value(2 * wo - 1)))}
        window = {}
        for w_i, (a, b) in enumerate(_WINDOWS3):
            valid = [c for c in (ok[a][0], ok[b][1]) if c is not None]
            window[(a, b)] = (gs[w_i], idxs[w_i], valid)
        sums = {}
        for parity, taps in _TAPS3.items():
            acc = None
            for r, c, pos in taps:
                g, a, valid = window[(r, c)]
                hit = arith.cmpi(arith.CmpIPredicate.eq, a, arith.constant(_I32(), pos))
                for cond in valid:
                    hit = arith.andi(hit, cond)
                v = arith.select(hit, g, zero(elt))
                acc = v if acc is None else arith.addf(acc, v)
            sums[parity] = acc
        two_i = index_value(2)
        py = arith.cmpi(arith.CmpIPredicate.ne, arith.remui(row, two_i), index_value(0))
        px = arith.cmpi(arith.CmpIPredicate.ne, arith.remui(col, two_i), index_value(0))
        return arith.select(py, arith.select(px, sums[(1, 1)], sums[(1, 0)]),
                            arith.select(px, sums[(0, 1)], sums[(0, 0)]))

    return _kernel_backward(grad, idx, p.shape, elt, "max_pool3x3s2_backward_indices",
                            maps + maps, value)
