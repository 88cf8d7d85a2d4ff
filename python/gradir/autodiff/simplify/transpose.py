"""``permute_dims`` patterns, TVM's gradient simplifier among them.

"transpose" means a ``permute_dims`` swapping the last two axes.

- ``permute_dims(permute_dims(a))`` -> ``a`` when the two permutations
  compose to the identity (any axes), else one ``permute_dims``;
  a ``permute_dims`` with the identity permutation is ``a``, one that only
  moves size-1 axes is a reshape.
- ``transpose(matmul(a, b))`` -> ``matmul(transpose(b), transpose(a))``
  (the seed's rule), where ``transpose(x)`` is ``y`` when ``x`` is
  ``transpose(y)``, or a transpose of ``x`` computed earlier; at most one
  new transpose is built (else the rewrite would add an op).  Matmuls with
  a 1-D operand are left alone, as the seed does, and so is a matmul with
  another use.

So the gradients of ``matmul(a, transpose(b))`` are ``matmul(g, b)`` and
``matmul(transpose(g), a)``, those of ``matmul(transpose(a), b)`` are
``matmul(b, transpose(g))`` and ``matmul(a, g)``.
"""

from __future__ import annotations

from ._facts import (Rewrite, existing_transpose, is_transpose, only_used_by,
                     permutation, producer, removable, same_phase, shape_of, swap_last)


def fold_trivial_permute(op, rewriter):
    """``permute_dims(a)`` with the identity permutation -> ``a``; one that
    only moves size-1 axes (the others keep their order) -> a reshape."""
    op = op.operation
    x = op.operands[0]
    perm = permutation(op)
    shape = shape_of(x)
    moved = [i for i in perm if shape[i] != 1]
    if moved != sorted(moved):
        return True
    rw = Rewrite(op, rewriter)
    t = op.results[0].type
    rw.replace(x if x.type == t else rw.build("rlx.reshape", [x], result=t))
    return None


def fold_permute_permute(op, rewriter):
    """``permute_dims(permute_dims(a, p), q)`` -> ``a`` or ``permute_dims(a, p o q)``."""
    op = op.operation
    inner = producer(op.operands[0], "rlx.permute_dims")
    if inner is None or not same_phase(inner, op):
        return True
    p, q = permutation(inner), permutation(op)
    composed = [p[i] for i in q]
    source = inner.operands[0]
    rw = Rewrite(op, rewriter)
    if composed == list(range(len(composed))):
        rw.replace(source)
        return None
    # One op for one: the inner permutation may have other users.
    rw.replace(rw.build("rlx.permute_dims", [source], {"axes": composed}))
    return None


def swap_matmul_transpose(op, rewriter):
    """``transpose(matmul(a, b))`` -> ``matmul(transpose(b), transpose(a))``."""
    op = op.operation
    if not is_transpose(op):
        return True
    mm = producer(op.operands[0], "rlx.matmul")
    if mm is None or not only_used_by(mm.results[0], op) or not same_phase(mm, op):
        return True
    a, b = mm.operands
    if len(shape_of(a)) < 2 or len(shape_of(b)) < 2:
        return True   # the seed skips 1-D operands: they have no transpose
    ta, tb = existing_transpose(a, op, rewriter), existing_transpose(b, op, rewriter)
    keep = [a if ta is None else ta, b if tb is None else tb]
    new_ops = 1 + (ta is None) + (tb is None)
    if new_ops > removable(op, keep=keep):
        return True
    rw = Rewrite(op, rewriter)
    if ta is None:
        ta = rw.build("rlx.permute_dims", [a], {"axes": swap_last(len(shape_of(a)))})
    if tb is None:
        tb = rw.build("rlx.permute_dims", [b], {"axes": swap_last(len(shape_of(b)))})
    rw.replace(rw.build("rlx.matmul", [tb, ta]))
    return None


PATTERNS = [
    ("rlx.permute_dims", fold_trivial_permute),
    ("rlx.permute_dims", fold_permute_permute),
    ("rlx.permute_dims", swap_matmul_transpose),
]

__all__ = ["PATTERNS", "fold_trivial_permute", "fold_permute_permute",
           "swap_matmul_transpose"]
