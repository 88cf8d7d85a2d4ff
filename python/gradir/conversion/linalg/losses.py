"""Loss rlx ops -> linalg.

cross_entropy_with_logits, nll_loss -> reduction ``linalg.generic`` ops
(nll_loss gathers with ``tensor.extract``; a target outside [0, C) that is
not ``ignore_index`` is clamped, and the generic is marked with
``mark_index_check`` so that the CPU's code checks the targets first and
raises, as the interpreter does).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, tensor

from ..._compat import linalg  # not mlir.dialects.linalg: see _compat.linalg
from ...dialects.infer import attributes_of
from .linalg_utils import (REDUCTION, elementwise, elt_of, filled, generic, identity_map,
                           index_value, maps_generic, mark_index_check, scalar_const, shape_of,
                           zero)
from .registry import lowers


def _full_reduction(inputs, elt, body, n_out=1):
    """A reduction of every loop dim of the (same-shaped) ``inputs`` into
    ``n_out`` 0-d accumulators (initialised to 0)."""
    rank = len(shape_of(inputs[0]))
    inits = [filled([], elt, 0) for _ in range(n_out)]
    scalar = ir.AffineMap.get(rank, 0, [])
    return generic(inputs, inits, [identity_map(rank)] * len(inputs) + [scalar] * n_out,
                   [REDUCTION] * rank, body)


@lowers("rlx.cross_entropy_with_logits")
def lower_cross_entropy(op):
    # Relax: -sum(x * y), divided by the batch size for 2-D inputs.
    x, y = op.operands
    elt = elt_of(x)
    total = _full_reduction([x, y], elt,
                            lambda a, b, acc: [arith.addf(acc, arith.mulf(a, b))])[0]
    shape = shape_of(x)
    batch = shape[0] if len(shape) == 2 else None

    def finish(t):
        t = arith.negf(t)
        return t if batch is None else arith.divf(t, scalar_const(t.type, batch))

    return [elementwise([total], [], elt, finish)]


@lowers("rlx.nll_loss")
def lower_nll_loss(op):
    pred, targets = op.operands[0], op.operands[1]
    weights = op.operands[2] if len(op.operands) > 2 else None
    attrs = attributes_of(op)
    reduction = attrs.get("reduction", "mean")
    ignore = attrs.get("ignore_index", -100)
    pshape = shape_of(pred)
    elt = elt_of(pred)
    n_classes = pshape[0] if len(pshape) == 1 else pshape[1]
    tshape = shape_of(targets)
    rank = len(tshape)

    def loss_and_weight(t):
        valid = arith.cmpi(arith.CmpIPredicate.ne, t, scalar_const(t.type, ignore))
        ti = arith.index_cast(ir.IndexType.get(), t)
        tc = arith.select(valid, ti, index_value(0))
        tc = arith.minsi(arith.maxsi(tc, index_value(0)), index_value(n_classes - 1))
        if len(pshape) == 1:
            coords = [tc]
        else:
            coords = [linalg.IndexOp(0).result, tc] + [linalg.IndexOp(d).result
                                                       for d in range(1, rank)]
        p = tensor.extract(pred, coords)
        w = tensor.extract(weights, [tc]) if weights is not None else scalar_const(elt, 1)
        w = arith.select(valid, w, zero(elt))
        return arith.mulf(arith.negf(p), w), w

    def checked(result):
        if all(tshape):         # (no check of an empty batch)
            mark_index_check(result, "rlx.nll_loss", 0, n_classes, ignore,
                             f"target out of range [0, {n_classes})")
        return result

    if reduction == "none":
        return [checked(maps_generic([targets], [identity_map(rank)], tshape, elt,
                                     lambda t: loss_and_weight(t)[0]))]

    def body(t, acc_l, acc_w):
        loss, w = loss_and_weight(t)
        return [arith.addf(acc_l, loss), arith.addf(acc_w, w)]

    inits = [filled([], elt, 0), filled([], elt, 0)]
    scalar = ir.AffineMap.get(rank, 0, [])
    total, wsum = generic([targets], inits, [identity_map(rank), scalar, scalar],
                          [REDUCTION] * rank, body)
    checked(total)
    if reduction == "sum":
        return [total]
    return [elementwise([total, wsum], [], elt, arith.divf)]
