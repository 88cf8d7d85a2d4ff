"""Type and shape inference for the rlx dialect: one function per op.

``INFER`` maps an op name (``"rlx.add"``) to ``fn(operands, attrs, results)``:

- ``operands``: the operand types (``ir.Type``; tensors or tuples);
- ``attrs``: the op's attributes as Python values (``attributes_of``):
  ``array<i64>`` -> ``list[int]``, ``BoolAttr`` -> ``bool``, integers ->
  ``int``, floats -> ``float``, strings -> ``str``;
- ``results``: the declared result types, or ``None``.  Only the ops whose
  result type carries information (``reshape``, ``broadcast_to``, ``zeros``,
  ``ones``, ``full``, ``astype``, ``collapse_sum_to``) need it; for them the
  builders pass the type they are about to create.

It returns the list of result types, or raises ``ShapeError`` with a message
(without the ``'rlx.<op>' op`` prefix, which the callers add).  The builders
(``gradir.dialects.rlx``) and the verifier (``rlx-verify``) share this table,
so what the builders create is exactly what the verifier accepts.

``ATTRS`` describes every attribute an op knows: name -> (kind, required).
Kinds: ``axes`` (array<i64>), ``ints`` (array<i64>), ``int`` (i64), ``bool``
(BoolAttr), ``float`` (f64), ``str``.  The IRDL file declares the required
ones; the verifier checks the kinds of all of them.
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

from mlir import ir

from .ops import BINARY, COMPARE, REDUCE, UNARY
from .util import ShapeError
from .util import checked_axes as _norm_axes

__all__ = ["ShapeError", "INFER", "ATTRS", "attributes_of", "raw_attributes", "FLOAT_TYPES",
           "INDEX_TYPES", "ALL_ELEMENT_TYPES", "broadcast_shapes", "element_type_name"]


FLOAT_TYPES = ("f16", "bf16", "f32", "f64")
INDEX_TYPES = ("i32", "i64")
ALL_ELEMENT_TYPES = FLOAT_TYPES + ("i1",) + INDEX_TYPES


# --- attributes ------------------------------------------------------------

def _py_value(attr: ir.Attribute):
    if isinstance(attr, ir.DenseI64ArrayAttr):
        return [int(v) for v in attr]
    if isinstance(attr, ir.BoolAttr):
        return bool(attr.value)
    if isinstance(attr, ir.IntegerAttr):
        return int(attr.value)
    if isinstance(attr, ir.FloatAttr):
        return float(attr.value)
    if isinstance(attr, ir.StringAttr):
        return attr.value
    if isinstance(attr, ir.TypeAttr):
        return attr.value
    return attr


def attributes_of(op) -> dict:
    """The attributes of ``op`` (an Operation or OpView) as Python values;
    attributes of other kinds are returned as ``ir.Attribute``."""
    return {name: _py_value(attr) for name, attr in raw_attributes(op).items()}


def raw_attributes(op) -> dict:
    """The attributes of ``op`` as ``{name: ir.Attribute}``."""
    op = op.operation if hasattr(op, "operation") else op
    out = {}
    for item in op.attributes:
        if isinstance(item, str):
            out[item] = op.attributes[item]
        else:
            out[item.name] = item.attr
    return out


def attribute_kind_ok(kind: str, attr: ir.Attribute) -> bool:
    """Whether ``attr`` has the form that attribute ``kind`` requires."""
    if kind in ("axes", "ints"):
        return isinstance(attr, ir.DenseI64ArrayAttr)
    if kind == "bool":
        return isinstance(attr, ir.BoolAttr)
    if kind == "int":
        return (isinstance(attr, ir.IntegerAttr) and not isinstance(attr, ir.BoolAttr)
                and str(attr.type) == "i64")
    if kind == "float":
        return isinstance(attr, ir.FloatAttr) and str(attr.type) == "f64"
    if kind == "str":
        return isinstance(attr, ir.StringAttr)
    raise AssertionError(kind)


KIND_SPELLING = {"axes": "array<i64>", "ints": "array<i64>", "int": "i64 integer",
                 "bool": "BoolAttr", "float": "f64 float", "str": "string"}


# --- type helpers ----------------------------------------------------------

_FLOAT_NAMES = {ir.F16Type: "f16", ir.BF16Type: "bf16", ir.F32Type: "f32", ir.F64Type: "f64"}


def element_type_name(t: ir.Type) -> str:
    """``str(t)`` of an element type; the common ones without printing
    (printing a type costs microseconds)."""
    name = _FLOAT_NAMES.get(type(t))
    if name is not None:
        return name
    if type(t) is ir.IntegerType and t.is_signless:
        return f"i{t.width}"
    return str(t)


def _tensor(t: ir.Type, what: str) -> ir.RankedTensorType:
    if not isinstance(t, ir.RankedTensorType):
        raise ShapeError(f"{what} must be a ranked tensor, got {t}")
    if any(d < 0 for d in t.shape):
        raise ShapeError(f"{what} must have a static shape, got {t}")
    return t


def _shape(t: ir.Type, what: str = "operand") -> list[int]:
    return list(_tensor(t, what).shape)


def _elt(t: ir.Type) -> ir.Type:
    return t.element_type


def _check_elt(t: ir.Type, allowed: Sequence[str], what: str) -> None:
    e = element_type_name(_tensor(t, what).element_type)
    if e not in allowed:
        raise ShapeError(f"{what} element type must be one of {', '.join(allowed)}, got {e}")


def _float(t: ir.Type, what: str = "operand") -> ir.RankedTensorType:
    _check_elt(t, FLOAT_TYPES, what)
    return t


def _any_elt(t: ir.Type, what: str = "operand") -> ir.RankedTensorType:
    _check_elt(t, ALL_ELEMENT_TYPES, what)
    return t


def _same_elt(a: ir.Type, b: ir.Type, what: str) -> None:
    if _elt(a) != _elt(b):
        raise ShapeError(f"{what} must have the same element type, got {_elt(a)} and {_elt(b)}")


_DYNAMIC = -(1 << 63)        # ShapedType.get_dynamic_size()


def _tensor_type(shape: Sequence[int], elt: ir.Type) -> ir.RankedTensorType:
    shape = list(shape)
    for n in shape:
        # an inferred size past int64 (a concat of 4 x 2^62, a padding of
        # 2^63 - 1): MLIR's types hold 64-bit sizes
        if n != _DYNAMIC and not 0 <= n < 1 << 63:
            raise ShapeError(f"the result's size {n} along an axis does not fit in 64 bits"
                             if n >= 0 else f"the result's size along an axis is negative ({n})")
    return ir.RankedTensorType.get(shape, elt)


def _count(ops: Sequence[ir.Type], n: int) -> None:
    if len(ops) != n:
        raise ShapeError(f"expected {n} operand(s), got {len(ops)}")


def _need_result(results, what="the result type") -> ir.RankedTensorType:
    if not results or len(results) != 1:
        raise ShapeError(f"{what} is required (it carries the shape)")
    return _tensor(results[0], "result")


def broadcast_shapes(*shapes: Sequence[int]) -> list[int]:
    """numpy broadcasting of static shapes; ShapeError if incompatible."""
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(rank):
        dims = {s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0}
        dims.discard(1)
        if len(dims) > 1:
            text = " and ".join(_fmt(s) for s in shapes)
            raise ShapeError(f"shapes {text} are not broadcastable")
        out.append(dims.pop() if dims else 1)
    return out


def _broadcasts(src, dst) -> bool:
    """Whether ``src`` broadcasts (numpy rules) to exactly ``dst``."""
    try:
        return broadcast_shapes(src, dst) == list(dst)
    except ShapeError:
        return False


def _fmt(shape) -> str:
    return str(tuple(int(d) for d in shape))


def _one_axis(attrs, name: str, rank: int, default: int | None):
    """A single-axis ``array<i64: a>`` attribute, normalised (None if absent
    and no default)."""
    axes = attrs.get(name)
    if axes is None:
        return None if default is None else _norm_axes([default], rank, name)[0]
    if len(axes) != 1:
        raise ShapeError(f"'{name}' must hold exactly one axis, got {len(axes)}")
    return _norm_axes(axes, rank, name)[0]


# --- per-op inference ------------------------------------------------------

def _unary(ops, attrs, results):
    _count(ops, 1)
    return [_float(ops[0], "operand")]


def _binary(ops, attrs, results):
    _count(ops, 2)
    a, b = _float(ops[0], "lhs"), _float(ops[1], "rhs")
    _same_elt(a, b, "lhs and rhs")
    return [_tensor_type(broadcast_shapes(a.shape, b.shape), _elt(a))]


def _compare(ops, attrs, results):
    _count(ops, 2)
    a, b = _any_elt(ops[0], "lhs"), _any_elt(ops[1], "rhs")
    _same_elt(a, b, "lhs and rhs")
    return [_tensor_type(broadcast_shapes(a.shape, b.shape), ir.IntegerType.get_signless(1))]


def _where(ops, attrs, results):
    _count(ops, 3)
    _check_elt(ops[0], ("i1",), "condition")
    a, b = _any_elt(ops[1], "lhs"), _any_elt(ops[2], "rhs")
    _same_elt(a, b, "lhs and rhs")
    return [_tensor_type(broadcast_shapes(ops[0].shape, a.shape, b.shape), _elt(a))]


def _matmul(ops, attrs, results):
    _count(ops, 2)
    a, b = _float(ops[0], "lhs"), _float(ops[1], "rhs")
    _same_elt(a, b, "lhs and rhs")
    sa, sb = list(a.shape), list(b.shape)
    if not sa or not sb:
        raise ShapeError("matmul operands must have rank >= 1")
    a1, b1 = len(sa) == 1, len(sb) == 1
    if a1:
        sa = [1] + sa
    if b1:
        sb = sb + [1]
    if sa[-1] != sb[-2]:
        raise ShapeError(f"contraction dimensions differ: lhs {_fmt(a.shape)} has {sa[-1]}, "
                         f"rhs {_fmt(b.shape)} has {sb[-2]}")
    batch = broadcast_shapes(sa[:-2], sb[:-2])
    out = batch + ([] if a1 else [sa[-2]]) + ([] if b1 else [sb[-1]])
    return [_tensor_type(out, _elt(a))]


def _permute_dims(ops, attrs, results):
    _count(ops, 1)
    x = _any_elt(ops[0], "operand")
    rank = x.rank
    axes = attrs.get("axes")
    if axes is None:
        perm = list(range(rank))[::-1]
    else:
        if len(axes) != rank:
            raise ShapeError(f"'axes' must have {rank} entries (the rank), got {len(axes)}")
        perm = _norm_axes(axes, rank, "axes")
    return [_tensor_type([x.shape[p] for p in perm], _elt(x))]


def _reshape(ops, attrs, results):
    _count(ops, 1)
    x = _any_elt(ops[0], "operand")
    r = _need_result(results)
    _same_elt(x, r, "operand and result")
    if math.prod(x.shape) != math.prod(r.shape):
        raise ShapeError(f"cannot reshape {_fmt(x.shape)} ({math.prod(x.shape)} elements) to "
                         f"{_fmt(r.shape)} ({math.prod(r.shape)} elements)")
    return [r]


def _broadcast_to(ops, attrs, results):
    _count(ops, 1)
    x = _any_elt(ops[0], "operand")
    r = _need_result(results)
    _same_elt(x, r, "operand and result")
    if len(x.shape) > len(r.shape) or not _broadcasts(x.shape, r.shape):
        raise ShapeError(f"cannot broadcast {_fmt(x.shape)} to {_fmt(r.shape)}")
    return [r]


def _collapse_sum_to(ops, attrs, results):
    _count(ops, 1)
    x = _float(ops[0], "operand")
    r = _need_result(results)
    _same_elt(x, r, "operand and result")
    if len(r.shape) > len(x.shape) or not _broadcasts(r.shape, x.shape):
        raise ShapeError(f"cannot collapse {_fmt(x.shape)} to {_fmt(r.shape)}: "
                         f"{_fmt(r.shape)} does not broadcast to {_fmt(x.shape)}")
    return [r]


def _expand_dims(ops, attrs, results):
    _count(ops, 1)
    x = _any_elt(ops[0], "operand")
    axes = attrs.get("axis")
    if axes is None:
        raise ShapeError("requires attribute 'axis'")
    rank = x.rank + len(axes)
    axes = _norm_axes(axes, rank, "axis")
    it = iter(x.shape)
    return [_tensor_type([1 if i in axes else next(it) for i in range(rank)], _elt(x))]


def _squeeze(ops, attrs, results):
    _count(ops, 1)
    x = _any_elt(ops[0], "operand")
    axes = attrs.get("axis")
    if axes is None:
        drop = {i for i, d in enumerate(x.shape) if d == 1}
    else:
        drop = set(_norm_axes(axes, x.rank, "axis"))
        for a in sorted(drop):
            if x.shape[a] != 1:
                raise ShapeError(f"cannot squeeze axis {a} of size {x.shape[a]}")
    return [_tensor_type([d for i, d in enumerate(x.shape) if i not in drop], _elt(x))]


def _flatten(ops, attrs, results):
    _count(ops, 1)
    x = _any_elt(ops[0], "operand")
    return [_tensor_type([math.prod(x.shape)], _elt(x))]


def _concat(ops, attrs, results):
    if not ops:
        raise ShapeError("requires at least one operand")
    xs = [_any_elt(t, f"operand #{i}") for i, t in enumerate(ops)]
    rank = xs[0].rank
    if rank == 0:
        raise ShapeError("cannot concatenate 0-d tensors")
    axis = _one_axis(attrs, "axis", rank, 0)
    out = list(xs[0].shape)
    for i, x in enumerate(xs[1:], 1):
        _same_elt(xs[0], x, f"operand #0 and operand #{i}")
        if x.rank != rank:
            raise ShapeError(f"operand #{i} has rank {x.rank}, expected {rank}")
        for d in range(rank):
            if d != axis and x.shape[d] != out[d]:
                raise ShapeError(f"operand #{i} has shape {_fmt(x.shape)}, incompatible with "
                                 f"{_fmt(xs[0].shape)} outside axis {axis}")
        out[axis] += x.shape[axis]
    return [_tensor_type(out, _elt(xs[0]))]


# Most results a split may make when no results are declared (a builder):
# MLIR counts an op's results in 32 bits; more than this many Python types
# would not fit in memory anyway.
_MAX_PIECES = 1 << 24


def _split(ops, attrs, results):
    _count(ops, 1)
    x = _any_elt(ops[0], "operand")
    if x.rank == 0:
        raise ShapeError("cannot split a 0-d tensor")
    axis = _one_axis(attrs, "axis", x.rank, 0)
    n = x.shape[axis]
    has_s, has_i = "sections" in attrs, "indices" in attrs
    if has_s == has_i:
        raise ShapeError("requires exactly one of 'sections' and 'indices'")
    if has_s:
        k = attrs["sections"]
        if k <= 0:
            raise ShapeError(f"'sections' must be positive, got {k}")
        # one result per piece: checked before any piece is sized (a huge
        # 'sections' made a list that long)
        if results is not None and k != len(results):
            raise ShapeError(f"has {len(results)} result(s), inferred {k}")
        if k > _MAX_PIECES:
            raise ShapeError(f"'sections' = {k}: more results than an op can have "
                             f"(at most {_MAX_PIECES})")
        # Relax: pieces of ceil(n / k) elements, clamped at the end (the last
        # pieces may be smaller, or empty).
        step = -(-n // k)
        sizes = [max(0, min(n, (i + 1) * step) - min(n, i * step)) for i in range(k)]
    else:
        idx = attrs["indices"]
        bounds = [0] + [min(max(i if i >= 0 else i + n, 0), n) for i in idx] + [n]
        if any(b < a for a, b in zip(bounds, bounds[1:])):
            raise ShapeError(f"'indices' {idx} must be non-decreasing")
        sizes = [b - a for a, b in zip(bounds, bounds[1:])]
    out = []
    for s in sizes:
        shape = list(x.shape)
        shape[axis] = s
        out.append(_tensor_type(shape, _elt(x)))
    return out


def _strided_slice(ops, attrs, results):
    _count(ops, 1)
    x = _any_elt(ops[0], "operand")
    for name in ("axes", "begin", "end"):
        if name not in attrs:
            raise ShapeError(f"requires attribute '{name}'")
    axes, begin, end = attrs["axes"], attrs["begin"], attrs["end"]
    strides = attrs.get("strides", [1] * len(axes))
    if not len(axes) == len(begin) == len(end) == len(strides):
        raise ShapeError("'axes', 'begin', 'end' and 'strides' must have the same length")
    axes = _norm_axes(axes, x.rank, "axes")
    shape = list(x.shape)
    for a, b, e, s in zip(axes, begin, end, strides):
        if s == 0:
            raise ShapeError("'strides' must be non-zero")
        shape[a] = len(range(*slice(b, e, s).indices(x.shape[a])))
    return [_tensor_type(shape, _elt(x))]


def _take(ops, attrs, results):
    _count(ops, 2)
    x = _any_elt(ops[0], "operand")
    _check_elt(ops[1], INDEX_TYPES, "indices")
    ind = list(ops[1].shape)
    axis = _one_axis(attrs, "axis", max(x.rank, 1), None)
    # Every index into an empty axis is out of range, in any mode (clip has
    # no element to clamp to, wrap none to wrap around): the compiled code
    # read before the buffer or divided by zero.
    taken = 1
    for n in ind:
        taken *= n
    size = 1
    for n in (x.shape if axis is None else x.shape[axis:axis + 1]):
        size *= n
    if taken > 0 and size == 0 and all(n >= 0 for n in ind):
        raise ShapeError(f"cannot take {taken} element(s) from an empty "
                         + ("tensor" if axis is None else f"axis {axis}"))
    if axis is None:
        return [_tensor_type(ind, _elt(x))]
    if x.rank == 0:
        raise ShapeError("cannot take along an axis of a 0-d tensor")
    return [_tensor_type(list(x.shape[:axis]) + ind + list(x.shape[axis + 1:]), _elt(x))]


def _triu(ops, attrs, results):
    _count(ops, 1)
    x = _any_elt(ops[0], "operand")
    if x.rank < 2:
        raise ShapeError(f"operand must have rank >= 2, got {x.rank}")
    return [x]


def _reduced_shape(x, attrs):
    axes = attrs.get("axis")
    axes = list(range(x.rank)) if axes is None else _norm_axes(axes, x.rank, "axis")
    keep = attrs.get("keepdims", False)
    return [1 if i in axes else d for i, d in enumerate(x.shape)
            if keep or i not in axes]


def _reduce(ops, attrs, results):
    _count(ops, 1)
    x = _float(ops[0], "operand")
    return [_tensor_type(_reduced_shape(x, attrs), _elt(x))]


def _extremum(ops, attrs, results):
    out = _reduce(ops, attrs, results)
    x = ops[0]
    axes = attrs.get("axis")
    axes = list(range(x.rank)) if axes is None else _norm_axes(axes, x.rank, "axis")
    empty = [a for a in axes if x.shape[a] == 0]
    if empty and math.prod(out[0].shape) > 0:
        raise ShapeError(f"reduces axis {empty[0]} of size 0: the max or min of nothing has "
                         "no value (numpy refuses it too)")
    return out


def _cumsum(ops, attrs, results):
    _count(ops, 1)
    x = _float(ops[0], "operand")
    if attrs.get("axis") is None:
        return [_tensor_type([math.prod(x.shape)], _elt(x))]
    _one_axis(attrs, "axis", x.rank, None)
    return [x]


def _softmax(ops, attrs, results):
    _count(ops, 1)
    x = _float(ops[0], "operand")
    if x.rank == 0:
        raise ShapeError("operand must have rank >= 1")
    _one_axis(attrs, "axis", x.rank, -1)
    return [x]


def _cross_entropy(ops, attrs, results):
    _count(ops, 2)
    p, y = _float(ops[0], "predictions"), _float(ops[1], "labels")
    _same_elt(p, y, "predictions and labels")
    if list(p.shape) != list(y.shape):
        raise ShapeError(f"predictions {_fmt(p.shape)} and labels {_fmt(y.shape)} "
                         "must have the same shape")
    if p.rank not in (1, 2):
        raise ShapeError(f"predictions must have rank 1 or 2, got {p.rank}")
    return [_tensor_type([], _elt(p))]


def _nll_loss(ops, attrs, results):
    if len(ops) not in (2, 3):
        raise ShapeError(f"expected 2 or 3 operands, got {len(ops)}")
    p = _float(ops[0], "predictions")
    _check_elt(ops[1], INDEX_TYPES, "targets")
    t = list(ops[1].shape)
    if p.rank == 0:
        raise ShapeError("predictions must have rank >= 1")
    c = p.shape[0] if p.rank == 1 else p.shape[1]
    expect = [] if p.rank == 1 else [p.shape[0]] + list(p.shape[2:])
    if t != expect:
        raise ShapeError(f"targets shape {_fmt(t)} does not match predictions "
                         f"{_fmt(p.shape)} (expected {_fmt(expect)})")
    targets = 1
    for n in t:
        targets *= n
    if c == 0 and targets > 0 and all(n >= 0 for n in t):
        # every target is out of range (the compiled code read before the buffer)
        raise ShapeError(f"predictions have 0 classes: none of the {targets} target(s) "
                         "can pick one")
    if len(ops) == 3:
        w = _float(ops[2], "weights")
        _same_elt(p, w, "predictions and weights")
        if list(w.shape) != [c]:
            raise ShapeError(f"weights must have shape ({c},), got {_fmt(w.shape)}")
    red = attrs.get("reduction", "mean")
    if red not in ("mean", "sum", "none"):
        raise ShapeError(f"'reduction' must be \"mean\", \"sum\" or \"none\", got {red!r}")
    return [_tensor_type(t if red == "none" else [], _elt(p))]


def _pair(attrs, name, default=None, n=2):
    v = attrs.get(name, default)
    if v is None:
        raise ShapeError(f"requires attribute '{name}'")
    if len(v) != n:
        raise ShapeError(f"'{name}' must have {n} entries, got {len(v)}")
    return list(v)


def _conv_attrs(attrs, with_groups=True):
    strides = _pair(attrs, "strides", [1, 1])
    padding = _pair(attrs, "padding", [0, 0, 0, 0], n=4)
    dilation = _pair(attrs, "dilation", [1, 1])
    if any(s <= 0 for s in strides) or any(d <= 0 for d in dilation):
        raise ShapeError("'strides' and 'dilation' must be positive")
    if any(p < 0 for p in padding):
        raise ShapeError("'padding' must be non-negative")
    groups = attrs.get("groups", 1) if with_groups else 1
    if groups <= 0:
        raise ShapeError(f"'groups' must be positive, got {groups}")
    return strides, padding, dilation, groups


def _conv2d(ops, attrs, results):
    _count(ops, 2)
    x, w = _float(ops[0], "data"), _float(ops[1], "weight")
    _same_elt(x, w, "data and weight")
    if x.rank != 4 or w.rank != 4:
        raise ShapeError("data (NCHW) and weight (OIHW) must have rank 4")
    strides, padding, dilation, groups = _conv_attrs(attrs)
    n, c, h, wd = x.shape
    o, i, kh, kw = w.shape
    if c % groups or o % groups:
        raise ShapeError(f"'groups' {groups} must divide input channels {c} and output channels {o}")
    if c // groups != i:
        raise ShapeError(f"weight has {i} input channels, expected {c // groups} "
                         f"(data channels {c} / groups {groups})")
    oh = (h + padding[0] + padding[2] - dilation[0] * (kh - 1) - 1) // strides[0] + 1
    ow = (wd + padding[1] + padding[3] - dilation[1] * (kw - 1) - 1) // strides[1] + 1
    if oh <= 0 or ow <= 0:
        raise ShapeError(f"kernel {kh}x{kw} (dilation {dilation}) is larger than the padded input "
                         f"{h + padding[0] + padding[2]}x{wd + padding[1] + padding[3]}")
    return [_tensor_type([n, o, oh, ow], _elt(x))]


def _conv2d_transpose(ops, attrs, results):
    _count(ops, 2)
    x, w = _float(ops[0], "data"), _float(ops[1], "weight")
    _same_elt(x, w, "data and weight")
    if x.rank != 4 or w.rank != 4:
        raise ShapeError("data (NCHW) and weight (IOHW) must have rank 4")
    strides, padding, dilation, groups = _conv_attrs(attrs)
    out_pad = _pair(attrs, "output_padding", [0, 0])
    n, c, h, wd = x.shape
    i, o, kh, kw = w.shape
    if c != i:
        raise ShapeError(f"weight has {i} input channels, data has {c}")
    if c % groups:
        raise ShapeError(f"'groups' {groups} must divide input channels {c}")
    if any(not 0 <= p < max(s, d) for p, s, d in zip(out_pad, strides, dilation)):
        raise ShapeError("'output_padding' must be smaller than the stride or the dilation")
    oh = (h - 1) * strides[0] - padding[0] - padding[2] + dilation[0] * (kh - 1) + out_pad[0] + 1
    ow = (wd - 1) * strides[1] - padding[1] - padding[3] + dilation[1] * (kw - 1) + out_pad[1] + 1
    if oh <= 0 or ow <= 0:
        raise ShapeError("padding leaves an empty output")
    return [_tensor_type([n, o * groups, oh, ow], _elt(x))]


def _pool_out(x, attrs):
    if x.rank != 4:
        raise ShapeError(f"data must have rank 4 (NCHW), got {x.rank}")
    pool = _pair(attrs, "pool_size")
    strides, padding, dilation, _ = _conv_attrs(attrs, with_groups=False)
    if any(k <= 0 for k in pool):
        raise ShapeError("'pool_size' must be positive")
    ceil = attrs.get("ceil_mode", False)
    n, c, h, w = x.shape
    out = []
    for size, k, s, d, p0, p1 in ((h, pool[0], strides[0], dilation[0], padding[0], padding[2]),
                                  (w, pool[1], strides[1], dilation[1], padding[1], padding[3])):
        span = size + p0 + p1 - d * (k - 1) - 1
        if span < 0:
            raise ShapeError(f"pool window {pool} is larger than the padded input")
        o = (-(-span // s) if ceil else span // s) + 1
        out.append(o)
    return [n, c] + out


def _pool(ops, attrs, results):
    _count(ops, 1)
    x = _float(ops[0], "data")
    return [_tensor_type(_pool_out(x, attrs), _elt(x))]


def _pool_backward(ops, attrs, results):
    _count(ops, 2)
    g, x = _float(ops[0], "output_grad"), _float(ops[1], "data")
    _same_elt(g, x, "output_grad and data")
    expect = _pool_out(x, attrs)
    if list(g.shape) != expect:
        raise ShapeError(f"output_grad has shape {_fmt(g.shape)}, expected the pooled "
                         f"shape {_fmt(expect)}")
    return [x]


def _layer_norm(ops, attrs, results):
    _count(ops, 3)
    x, g, b = _float(ops[0], "data"), _float(ops[1], "gamma"), _float(ops[2], "beta")
    _same_elt(x, g, "data and gamma")
    _same_elt(x, b, "data and beta")
    if "axes" not in attrs:
        raise ShapeError("requires attribute 'axes'")
    axes = _norm_axes(attrs["axes"], x.rank, "axes")
    expect = [x.shape[a] for a in axes]
    for name, t in (("gamma", g), ("beta", b)):
        if list(t.shape) != expect:
            raise ShapeError(f"{name} must have shape {_fmt(expect)}, got {_fmt(t.shape)}")
    return [x]


def _rms_norm(ops, attrs, results):
    _count(ops, 2)
    x, w = _float(ops[0], "data"), _float(ops[1], "weight")
    _same_elt(x, w, "data and weight")
    if x.rank == 0:
        raise ShapeError("data must have rank >= 1")
    axes = _norm_axes(attrs.get("axes", [-1]), x.rank, "axes")
    expect = [x.shape[a] for a in axes]
    if list(w.shape) != expect:
        raise ShapeError(f"weight must have shape {_fmt(expect)}, got {_fmt(w.shape)}")
    return [x]


def _create(ops, attrs, results):
    _count(ops, 0)
    r = _need_result(results)
    _any_elt(r, "result")
    return [r]


def _full(ops, attrs, results):
    _count(ops, 1)
    f = _any_elt(ops[0], "fill")
    if f.rank != 0:
        raise ShapeError(f"fill must be a 0-d tensor, got {f}")
    r = _need_result(results)
    _any_elt(r, "result")
    return [r]


def _like(ops, attrs, results):
    _count(ops, 1)
    return [_any_elt(ops[0], "operand")]


def _astype(ops, attrs, results):
    _count(ops, 1)
    x = _any_elt(ops[0], "operand")
    r = _need_result(results)
    _any_elt(r, "result")
    if list(x.shape) != list(r.shape):
        raise ShapeError(f"result shape {_fmt(r.shape)} differs from operand shape {_fmt(x.shape)}")
    return [r]


def _tuple(ops, attrs, results):
    return [ir.TupleType.get_tuple(list(ops))]


def _tuple_get_item(ops, attrs, results):
    _count(ops, 1)
    t = ops[0]
    if not isinstance(t, ir.TupleType):
        raise ShapeError(f"operand must be a tuple, got {t}")
    if "index" not in attrs:
        raise ShapeError("requires attribute 'index'")
    i = attrs["index"]
    if not 0 <= i < t.num_types:
        raise ShapeError(f"index {i} is out of range for a tuple of {t.num_types} element(s)")
    return [t.get_type(i)]


def _marker(ops, attrs, results):
    _count(ops, 1)
    t = ops[0]
    if not isinstance(t, (ir.RankedTensorType, ir.TupleType)):
        raise ShapeError(f"operand must be a tensor or a tuple, got {t}")
    return [t]


INFER: dict[str, Callable] = {
    **{f"rlx.{n}": _unary for n in UNARY},
    **{f"rlx.{n}": _binary for n in BINARY},
    **{f"rlx.{n}": _compare for n in COMPARE},
    "rlx.where": _where,
    "rlx.matmul": _matmul,
    "rlx.permute_dims": _permute_dims,
    "rlx.reshape": _reshape,
    "rlx.broadcast_to": _broadcast_to,
    "rlx.expand_dims": _expand_dims,
    "rlx.squeeze": _squeeze,
    "rlx.flatten": _flatten,
    "rlx.concat": _concat,
    "rlx.split": _split,
    "rlx.strided_slice": _strided_slice,
    "rlx.take": _take,
    "rlx.triu": _triu,
    **{f"rlx.{n}": _reduce for n in REDUCE},
    "rlx.max": _extremum,
    "rlx.min": _extremum,
    "rlx.cumsum": _cumsum,
    "rlx.softmax": _softmax,
    "rlx.log_softmax": _softmax,
    "rlx.cross_entropy_with_logits": _cross_entropy,
    "rlx.nll_loss": _nll_loss,
    "rlx.conv2d": _conv2d,
    "rlx.max_pool2d": _pool,
    "rlx.avg_pool2d": _pool,
    "rlx.layer_norm": _layer_norm,
    "rlx.rms_norm": _rms_norm,
    "rlx.zeros": _create,
    "rlx.ones": _create,
    "rlx.full": _full,
    "rlx.zeros_like": _like,
    "rlx.ones_like": _like,
    "rlx.astype": _astype,
    "rlx.tuple": _tuple,
    "rlx.tuple_get_item": _tuple_get_item,
    "rlx.conv2d_transpose": _conv2d_transpose,
    "rlx.max_pool2d_backward": _pool_backward,
    "rlx.avg_pool2d_backward": _pool_backward,
    "rlx.collapse_sum_to": _collapse_sum_to,
    "grad.start_checkpoint": _marker,
    "grad.end_checkpoint": _marker,
    "grad.no_grad": _marker,
}

_REDUCE_ATTRS = {"axis": ("axes", False), "keepdims": ("bool", False)}
_POOL_ATTRS = {"pool_size": ("ints", True), "strides": ("ints", False),
               "padding": ("ints", False), "dilation": ("ints", False),
               "ceil_mode": ("bool", False)}
_CONV_ATTRS = {"strides": ("ints", False), "padding": ("ints", False),
               "dilation": ("ints", False), "groups": ("int", False)}

# name -> {attribute: (kind, required)}; ops not listed take no attributes.
ATTRS: dict[str, dict[str, tuple[str, bool]]] = {
    "rlx.permute_dims": {"axes": ("axes", False)},
    "rlx.expand_dims": {"axis": ("axes", True)},
    "rlx.squeeze": {"axis": ("axes", False)},
    "rlx.concat": {"axis": ("axes", False)},
    "rlx.split": {"axis": ("axes", False), "sections": ("int", False),
                  "indices": ("ints", False)},
    "rlx.strided_slice": {"axes": ("axes", True), "begin": ("ints", True),
                          "end": ("ints", True), "strides": ("ints", False)},
    "rlx.take": {"axis": ("axes", False)},
    "rlx.triu": {"k": ("int", False)},
    **{f"rlx.{n}": _REDUCE_ATTRS for n in REDUCE},
    "rlx.cumsum": {"axis": ("axes", False)},
    "rlx.softmax": {"axis": ("axes", False)},
    "rlx.log_softmax": {"axis": ("axes", False)},
    "rlx.nll_loss": {"reduction": ("str", False), "ignore_index": ("int", False)},
    "rlx.conv2d": _CONV_ATTRS,
    "rlx.conv2d_transpose": {**_CONV_ATTRS, "output_padding": ("ints", False)},
    "rlx.max_pool2d": _POOL_ATTRS,
    "rlx.avg_pool2d": {**_POOL_ATTRS, "count_include_pad": ("bool", False)},
    "rlx.max_pool2d_backward": _POOL_ATTRS,
    "rlx.avg_pool2d_backward": {**_POOL_ATTRS, "count_include_pad": ("bool", False)},
    "rlx.layer_norm": {"axes": ("axes", True), "epsilon": ("float", False)},
    "rlx.rms_norm": {"axes": ("axes", False), "epsilon": ("float", False)},
    "rlx.tuple_get_item": {"index": ("int", True)},
}

# What an absent optional attribute means (DESIGN.md: Relax's defaults), for
# the dialect reference (gradir.dialects.reference); the inference functions
# above, the interpreter, the VJP rules and the lowering each apply them.
_CONV_DEFAULTS = {"strides": "1, 1", "padding": "0, 0, 0, 0", "dilation": "1, 1",
                  "groups": "1"}
_POOL_DEFAULTS = {"strides": "1, 1", "padding": "0, 0, 0, 0", "dilation": "1, 1",
                  "ceil_mode": "false"}
DEFAULTS: dict[str, dict[str, str]] = {
    "rlx.permute_dims": {"axes": "reversed"},
    "rlx.squeeze": {"axis": "every size-1 axis"},
    "rlx.concat": {"axis": "0"},
    "rlx.split": {"axis": "0"},
    "rlx.strided_slice": {"strides": "1 per axis"},
    "rlx.take": {"axis": "the flattened input"},
    "rlx.triu": {"k": "0"},
    **{f"rlx.{n}": {"axis": "all axes", "keepdims": "false"} for n in REDUCE},
    "rlx.cumsum": {"axis": "the flattened input"},
    "rlx.softmax": {"axis": "-1"},
    "rlx.log_softmax": {"axis": "-1"},
    "rlx.nll_loss": {"reduction": '"mean"', "ignore_index": "none"},
    "rlx.conv2d": _CONV_DEFAULTS,
    "rlx.conv2d_transpose": {**_CONV_DEFAULTS, "output_padding": "0, 0"},
    "rlx.max_pool2d": _POOL_DEFAULTS,
    "rlx.avg_pool2d": {**_POOL_DEFAULTS, "count_include_pad": "false"},
    "rlx.max_pool2d_backward": _POOL_DEFAULTS,
    "rlx.avg_pool2d_backward": {**_POOL_DEFAULTS, "count_include_pad": "false"},
    "rlx.layer_norm": {"epsilon": "1e-5"},
    "rlx.rms_norm": {"axes": "-1", "epsilon": "1e-5"},
}
