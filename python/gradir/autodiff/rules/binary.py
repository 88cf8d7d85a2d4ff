"""VJP and JVP rules of binary elementwise ops, ``where`` and ``matmul``.

Broadcasting is undone with ``unbroadcast`` (``rlx.collapse_sum_to``).
Ties: ``maximum`` sends the gradient to lhs where lhs >= rhs, ``minimum`` to
lhs where lhs <= rhs (rhs gets it elsewhere) -- Relax's convention, so the
two adjoints always sum to the incoming gradient.  ``power``: d/da = b a^(b-1),
d/db = log(a) a^b (real only for a > 0; at a = 0 it is 0, as in JAX and PyTorch:
log is taken of where(a == 0, 1, a), so 0 * log 0 never makes a NaN); the rhs
adjoint is skipped when rhs is an ``arith.constant`` (no log of a constant's
negative base is built).

JVP rules (``*_jvp``, after the VJP rules; all take a batch of tangents) use
the same conventions: ``maximum``/``minimum`` pass the lhs tangent where the
VJP sends the gradient to lhs and the rhs tangent elsewhere, ``power`` takes
the log of where(a == 0, 1, a) and skips the exponent's term for a constant
exponent, ``where``'s condition gets no tangent.  An elementwise operand's
tangent is first broadcast to batch + the result's shape (``expand_tangent``):
a [3, 1] operand's tangent [n, 3, 1] becomes [n, 3, 4], never aligned with
the primal's dims by plain numpy broadcasting.  ``matmul`` pads each tangent
with unit dims so the batch dims stay in front (see its rule).
"""
from ...dialects import rlx
from . import jvp, vjp
from ._helpers import (const_scalar, elt_of, expand_tangent, shape_of, sum_tangents,
                       unbroadcast)


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


# --- JVP rules ---------------------------------------------------------------
# ``_expanded`` broadcasts each operand's tangent to batch + the result's shape
# first (expand_tangent), so the primal-shaped factors below (shapes that
# broadcast to the result's) line up with the tangent's trailing dims.

def _expanded(op, tangents, batch):
    y = op.results[0]
    return [expand_tangent(t, v, y, batch) for t, v in zip(tangents, op.operands)]


@jvp("rlx.add")
def add_jvp(op, tangents, batch):
    return [sum_tangents(*_expanded(op, tangents, batch))]


@jvp("rlx.subtract")
def subtract_jvp(op, tangents, batch):
    ta, tb = _expanded(op, tangents, batch)
    if tb is None:
        return [ta]
    return [rlx.negative(tb) if ta is None else rlx.subtract(ta, tb)]


@jvp("rlx.multiply")
def multiply_jvp(op, tangents, batch):
    # d(a b) = ta b + a tb
    ta, tb = _expanded(op, tangents, batch)
    a, b = op.operands
    return [sum_tangents(None if ta is None else rlx.multiply(ta, b),
                         None if tb is None else rlx.multiply(a, tb))]


@jvp("rlx.divide")
def divide_jvp(op, tangents, batch):
    # d(a/b) = ta / b - tb y / b
    ta, tb = _expanded(op, tangents, batch)
    a, b = op.operands
    y = op.results[0]
    da = None if ta is None else rlx.divide(ta, b)
    if tb is None:
        return [da]
    db = rlx.multiply(tb, rlx.divide(y, b))
    return [rlx.negative(db) if da is None else rlx.subtract(da, db)]


@jvp("rlx.power")
def power_jvp(op, tangents, batch):
    # d(a^b) = ta b a^(b-1) + tb log(a) a^b, log taken of where(a == 0, 1, a)
    # as in the VJP; a constant exponent gets no log term.
    ta, tb = _expanded(op, tangents, batch)
    a, b = op.operands
    y = op.results[0]
    one = const_scalar(1.0, elt_of(a))
    da = db = None
    if ta is not None:
        da = rlx.multiply(ta, rlx.multiply(b, rlx.power(a, rlx.subtract(b, one))))
    if tb is not None and not _is_constant(b):
        safe = rlx.where(rlx.equal(a, _zero(a)), one, a)
        db = rlx.multiply(tb, rlx.multiply(y, rlx.log(safe)))
    return [sum_tangents(da, db)]


def _select_jvp(mask, ta, tb):
    """where(mask, ta, tb), a None tangent read as 0 (mask: the result's shape)."""
    if ta is None and tb is None:
        return None
    zero = _zero(ta if ta is not None else tb)
    return rlx.where(mask, zero if ta is None else ta, zero if tb is None else tb)


@jvp("rlx.maximum")
def maximum_jvp(op, tangents, batch):
    # the lhs tangent where lhs >= rhs, the rhs one elsewhere (the VJP's ties)
    ta, tb = _expanded(op, tangents, batch)
    if ta is None and tb is None:
        return [None]
    a, b = op.operands
    return [_select_jvp(rlx.greater_equal(a, b), ta, tb)]


@jvp("rlx.minimum")
def minimum_jvp(op, tangents, batch):
    ta, tb = _expanded(op, tangents, batch)
    if ta is None and tb is None:
        return [None]
    a, b = op.operands
    return [_select_jvp(rlx.less_equal(a, b), ta, tb)]


@jvp("rlx.where")
def where_jvp(op, tangents, batch):
    # the condition gets no tangent; it broadcasts over the batch dims
    _, ta, tb = _expanded(op, [None] + list(tangents[1:]), batch)
    return [_select_jvp(op.operands[0], ta, tb)]


@jvp("rlx.matmul")
def matmul_jvp(op, tangents, batch):
    """d(A B) = tA B + A tB.  Each operand is promoted as numpy does
    ((k,) -> (1, k) on the lhs, (k, 1) on the rhs); a tangent is reshaped to
    batch + ones + its promoted shape, the ones padding it to the rank of the
    broadcast primal batch dims, so that matmul's batch broadcasting never
    aligns the tangent's batch dims with the primal's.  The product, batch +
    bdims + (m, n), is reshaped to batch + the result's shape."""
    ta, tb = tangents
    if ta is None and tb is None:
        return [None]
    a, b = op.operands
    sa, sb, sy = shape_of(a), shape_of(b), shape_of(op.results[0])
    pa = [1] + sa if len(sa) == 1 else sa
    pb = sb + [1] if len(sb) == 1 else sb
    nbd = max(len(pa), len(pb)) - 2            # rank of the broadcast primal batch dims
    batch = list(batch)
    want = batch + sy

    def promoted(t, p):
        shape = batch + [1] * (nbd + 2 - len(p)) + p
        return t if shape_of(t) == shape else rlx.reshape(t, shape)

    def primal(v, s, p):
        return v if s == p else rlx.reshape(v, p)

    def finish(r):
        return r if shape_of(r) == want else rlx.reshape(r, want)

    da = db = None
    if ta is not None:
        da = finish(rlx.matmul(promoted(ta, pa), primal(b, sb, pb)))
    if tb is not None:
        db = finish(rlx.matmul(primal(a, sa, pa), promoted(tb, pb)))
    return [sum_tangents(da, db)]
