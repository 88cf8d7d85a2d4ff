"""VJP rules of binary elementwise ops, ``where`` and ``matmul``.

Broadcasting is undone with ``unbroadcast`` (``rlx.collapse_sum_to``).
Ties: ``maximum`` sends the gradient to lhs where lhs >= rhs, ``minimum`` to
lhs where lhs <= rhs (rhs gets it elsewhere) -- Relax's convention, so the
two adjoints always sum to the incoming gradient.  ``power``: d/da = b a^(b-1),
d/db = log(a) a^b (real only for a > 0; at a = 0 it is 0, as in JAX and PyTorch:
log is taken of where(a == 0, 1, a), so 0 * log 0 never makes a NaN); the rhs
adjoint is skipped when rhs is an ``arith.constant`` (no log of a constant's
negative base is built).
"""
from ...dialects import rlx
from . import vjp
from ._helpers import const_scalar, elt_of, shape_of, unbroadcast


def _zero(like):
    return const_scalar(0.0, elt_of(like))


def _is_constant(v):
    owner = v.owner
    return getattr(owner, "name", None) == "arith.constant" or \
        getattr(getattr(owner, "operation", None), "name", None) == "arith.constant"


@vjp("rlx.add")
def add(op, grads):
    (g,) = grads
    a, b = op.operands
    return [unbroadcast(g, a), unbroadcast(g, b)]


@vjp("rlx.subtract")
def subtract(op, grads):
    (g,) = grads
    a, b = op.operands
    return [unbroadcast(g, a), unbroadcast(rlx.negative(g), b)]


@vjp("rlx.multiply")
def multiply(op, grads):
    (g,) = grads
    a, b = op.operands
    return [unbroadcast(rlx.multiply(g, b), a), unbroadcast(rlx.multiply(g, a), b)]


@vjp("rlx.divide")
def divide(op, grads):
    # d(a/b)/da = 1/b, d(a/b)/db = -a/b^2 = -y/b
    (g,) = grads
    a, b = op.operands
    y = op.results[0]
    ga = rlx.divide(g, b)
    gb = rlx.negative(rlx.divide(rlx.multiply(g, y), b))
    return [unbroadcast(ga, a), unbroadcast(gb, b)]


@vjp("rlx.power")
def power(op, grads):
    (g,) = grads
    a, b = op.operands
    y = op.results[0]
    one = const_scalar(1.0, elt_of(a))
    ga = rlx.multiply(g, rlx.multiply(b, rlx.power(a, rlx.subtract(b, one))))
    gb = None
    if not _is_constant(b):
        safe = rlx.where(rlx.equal(a, _zero(a)), one, a)
        gb = unbroadcast(rlx.multiply(g, rlx.multiply(y, rlx.log(safe))), b)
    return [unbroadcast(ga, a), gb]


def _select_binary(op, g, lhs_mask):
    a, b = op.operands
    zero = _zero(g)
    return [unbroadcast(rlx.where(lhs_mask, g, zero), a),
            unbroadcast(rlx.where(lhs_mask, zero, g), b)]


@vjp("rlx.maximum")
def maximum(op, grads):
    (g,) = grads
    a, b = op.operands
    return _select_binary(op, g, rlx.greater_equal(a, b))


@vjp("rlx.minimum")
def minimum(op, grads):
    (g,) = grads
    a, b = op.operands
    return _select_binary(op, g, rlx.less_equal(a, b))


@vjp("rlx.where")
def where(op, grads):
    (g,) = grads
    cond, a, b = op.operands
    zero = _zero(g)
    return [None, unbroadcast(rlx.where(cond, g, zero), a),
            unbroadcast(rlx.where(cond, zero, g), b)]


def _swap_last(x, rank=None):
    r = len(shape_of(x)) if rank is None else rank
    return rlx.permute_dims(x, list(range(r - 2)) + [r - 1, r - 2])


@vjp("rlx.matmul")
def matmul(op, grads):
    """numpy matmul: 1-D operands are promoted ((k,) -> (1, k) on the lhs,
    (k, 1) on the rhs), batch dimensions broadcast.  With G the adjoint
    reshaped to batch + (m, n): dA = G B^T, dB = A^T G, each summed over the
    batch dimensions its operand was broadcast along (collapse_sum_to) and
    reshaped back to the operand's shape."""
    (g,) = grads
    a, b = op.operands
    sa, sb = shape_of(a), shape_of(b)
    # (each shape read once: a read is a crossing into the bindings)
    A, pa = (rlx.reshape(a, [1] + sa), [1] + sa) if len(sa) == 1 else (a, sa)
    B, pb = (rlx.reshape(b, sb + [1]), sb + [1]) if len(sb) == 1 else (b, sb)
    sg = shape_of(g)
    batch = sg[:len(sg) - (len(sa) > 1) - (len(sb) > 1)]
    G = g
    gshape = batch + [pa[-2], pb[-1]]
    if sg != gshape:
        G = rlx.reshape(g, gshape)
    ga = rlx.matmul(G, _swap_last(B, len(pb)))      # batch + (m, k)
    gb = rlx.matmul(_swap_last(A, len(pa)), G)      # batch + (k, n)
    sga, sgb = shape_of(ga), shape_of(gb)
    if sga != pa:       # (``unbroadcast``)
        ga = rlx.collapse_sum_to(ga, pa)
    if sgb != pb:
        gb = rlx.collapse_sum_to(gb, pb)
    if pa != sa:
        ga = rlx.reshape(ga, sa)
    if pb != sb:
        gb = rlx.reshape(gb, sb)
    return [ga, gb]
