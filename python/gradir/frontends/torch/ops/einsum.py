"""``torch.einsum`` (aten.einsum): sums of products over labelled axes,
decomposed into rlx sums, permutes, reshapes, broadcasts and batched
``rlx.matmul``s.

The operands are contracted left to right, as torch does without a
``path``: a label that no later operand and not the output uses is summed
out of an operand before its contraction; two operands are contracted as
one batched matmul, ``(batch, left, summed) x (batch, summed, right)``, or,
when they share no summed label, as a broadcast ``multiply``.  Ellipses
(``"...ij,...jk"``) and axes of size 1 broadcasting against a larger one
follow torch.  A label repeated within one operand (a diagonal,
``"ii->i"``) has no mapping."""

from __future__ import annotations

import math

from gradir.dialects import rlx

from .registry import aten
from ._helpers import float_operands, reshape_to

__all__: list[str] = []

# labels standing for the axes under an ellipsis (not letters, so distinct)
_ELLIPSIS = [chr(0x100 + i) for i in range(64)]


def _parse(cx, equation, ranks):
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    specs = lhs.split(",")
    if len(specs) != len(ranks):
        raise cx.error(f"einsum {equation!r}: {len(specs)} subscripts for {len(ranks)} operands")
    n_ell = max([r - len(s.replace("...", "")) for s, r in zip(specs, ranks) if "..." in s],
                default=0)
    labels = []
    for s, r in zip(specs, ranks):
        if "..." in s:
            k = r - len(s.replace("...", ""))
            head, _, tail = s.partition("...")
            labels.append(list(head) + _ELLIPSIS[n_ell - k:n_ell] + list(tail))
        else:
            labels.append(list(s))
        if len(labels[-1]) != r:
            raise cx.error(f"einsum {equation!r}: subscripts {s!r} for an operand of rank {r}")
        if len(set(labels[-1])) != len(labels[-1]):
            raise cx.error(f"einsum {equation!r}: a label repeated within one operand "
                           f"({s!r}, a diagonal) has no rlx mapping")
    if arrow:
        if "..." in rhs:
            head, _, tail = rhs.partition("...")
            out = list(head) + _ELLIPSIS[:n_ell] + list(tail)
        else:
            out = list(rhs)
    else:
        counts = {}
        for ls in labels:
            for lab in ls:
                counts[lab] = counts.get(lab, 0) + 1
        out = _ELLIPSIS[:n_ell] + sorted(lab for lab, c in counts.items()
                                         if c == 1 and lab not in _ELLIPSIS)
    return labels, out


def _sum_out(cx, v, labels, drop):
    axes = [i for i, lab in enumerate(labels) if lab in drop]
    if not axes:
        return v, labels
    return rlx.sum_(v, axes, False), [lab for lab in labels if lab not in drop]


def _permute(cx, v, labels, order):
    axes = [labels.index(lab) for lab in order]
    return v if axes == list(range(len(axes))) else rlx.permute_dims(v, axes)


def _broadcast(cx, v, labels, sizes):
    """``v`` with its size-1 axes broadcast to the sizes of the other operand."""
    shape = cx.shape(v)
    want = [max(d, sizes.get(lab, d)) for d, lab in zip(shape, labels)]
    return v if want == shape else rlx.broadcast_to(v, want)


def _contract(cx, a, la, b, lb, keep):
    a, la = _sum_out(cx, a, la, {lab for lab in la if lab not in lb and lab not in keep})
    b, lb = _sum_out(cx, b, lb, {lab for lab in lb if lab not in la and lab not in keep})
    size = {}
    for v, ls in ((a, la), (b, lb)):
        for d, lab in zip(cx.shape(v), ls):
            size[lab] = max(size.get(lab, 1), d)
    shared = [lab for lab in la if lab in lb]
    a = _broadcast(cx, a, la, {lab: size[lab] for lab in shared})
    b = _broadcast(cx, b, lb, {lab: size[lab] for lab in shared})
    batch = [lab for lab in shared if lab in keep]
    summed = [lab for lab in shared if lab not in keep]
    left = [lab for lab in la if lab not in lb]
    right = [lab for lab in lb if lab not in la]
    dims = lambda ls: [size[lab] for lab in ls]  # noqa: E731
    if not summed:
        # a broadcast product: (batch, left, 1...) * (batch, 1..., right)
        a = reshape_to(_permute(cx, a, la, batch + left), dims(batch + left) + [1] * len(right))
        b = reshape_to(_permute(cx, b, lb, batch + right),
                       dims(batch) + [1] * len(left) + dims(right))
        return rlx.multiply(a, b), batch + left + right
    nb, nl, nk, nr = (math.prod(dims(ls)) for ls in (batch, left, summed, right))
    a = reshape_to(_permute(cx, a, la, batch + left + summed), [nb, nl, nk])
    b = reshape_to(_permute(cx, b, lb, batch + summed + right), [nb, nk, nr])
    y = reshape_to(rlx.matmul(a, b), dims(batch + left + right))
    return y, batch + left + right


@aten("aten.einsum.default")
def einsum(cx, equation, tensors, path=None):
    vs = float_operands(cx, *tensors)
    labels, out = _parse(cx, equation, [cx.rank(v) for v in vs])
    for lab in out:
        if not any(lab in ls for ls in labels):
            raise cx.error(f"einsum {equation!r}: output label {lab!r} is in no operand")
    acc, la = vs[0], labels[0]
    later = [lab for ls in labels[1:] for lab in ls]
    acc, la = _sum_out(cx, acc, la, {lab for lab in la if lab not in out and lab not in later})
    for i in range(1, len(vs)):
        later = {lab for ls in labels[i + 1:] for lab in ls}
        acc, la = _contract(cx, acc, la, vs[i], labels[i], set(out) | later)
    acc, la = _sum_out(cx, acc, la, {lab for lab in la if lab not in out})
    return _permute(cx, acc, la, out)
