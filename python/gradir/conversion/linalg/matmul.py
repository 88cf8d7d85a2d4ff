"""rlx.matmul -> ``linalg.matmul`` / ``linalg.batch_matmul`` (numpy
semantics: 1-D operands get a unit dim that the result drops again; batch
dims broadcast).

    %0 = "rlx.matmul"(%a, %b) : (tensor<4x5xf32>, tensor<5x3xf32>) -> tensor<4x3xf32>
becomes
    %z = linalg.fill ins(%cst0) outs(tensor.empty())
    %0 = linalg.matmul ins(%a, %b) outs(%z)

A batched lhs times a 2-D rhs is one ``linalg.matmul`` on the collapsed
``(batch*M, K)`` lhs; otherwise the batch dims are broadcast to the common
batch shape, collapsed to one, and multiplied by ``linalg.batch_matmul``.
"""

from __future__ import annotations

from mlir.dialects import linalg

from ...dialects.infer import broadcast_shapes
from .linalg_utils import broadcast_to, elt_of, filled, numel, reshape, shape_of
from .registry import lowers


@lowers("rlx.matmul")
def lower_matmul(op):
    a, b = op.operands
    elt = elt_of(op.results[0].type)
    out_shape = shape_of(op.results[0].type)
    sa, sb = shape_of(a), shape_of(b)
    if numel(out_shape) == 0 or 0 in sa or 0 in sb:
        # Nothing to multiply (a sum over an empty K is 0): no matmul, whose
        # tiling upstream does not expect zero-size dimensions.
        return [filled(out_shape, elt, 0)]
    if len(sa) == 1:
        sa = [1] + sa
        a = reshape(a, sa)
    if len(sb) == 1:
        sb = sb + [1]
        b = reshape(b, sb)
    m, k = sa[-2:]
    n = sb[-1]
    if k == 0 or numel(out_shape) == 0:
        return [filled(out_shape, elt, 0)]
    if all(d == 1 for d in sb[:-2]):  # rhs without (real) batch dims
        b = reshape(b, [k, n])
        batch = sa[:-2]
        lhs = reshape(a, [numel(batch) * m, k])
        c = linalg.matmul(lhs, b, outs=[filled([numel(batch) * m, n], elt, 0)])
        return [reshape(c, out_shape)]
    batch = broadcast_shapes(sa[:-2], sb[:-2])
    a = broadcast_to(a, batch + [m, k])
    b = broadcast_to(b, batch + [k, n])
    nb = numel(batch)
    c = linalg.batch_matmul(reshape(a, [nb, m, k]), reshape(b, [nb, k, n]),
                            outs=[filled([nb, m, n], elt, 0)])
    return [reshape(c, out_shape)]
