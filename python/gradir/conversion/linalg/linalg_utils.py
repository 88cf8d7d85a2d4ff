"""Builders shared by the rlx -> linalg patterns.

Every helper builds at the current insertion point and location (the
patterns enter ``rewriter.ip`` and ``op.location``) and works on static
shapes only.  Element types are ``ir.Type`` values; floats are f16, bf16,
f32 and f64, integers i1, i32 and i64 (signless, read as signed, i1 as
bool, as numpy does).
"""

from __future__ import annotations

import contextlib
import threading
from typing import Callable, Sequence

from mlir import ir
from mlir.dialects import arith, scf, tensor

from ..._compat import linalg  # not mlir.dialects.linalg: see _compat.linalg
from ...dialects.util import (elt_of, normalize_axes, numel, reduction_axes,  # noqa: F401
                              shape_of)  # re-exported for the patterns

__all__ = [
    "PARALLEL", "REDUCTION", "tensor_type", "shape_of", "elt_of", "is_float", "is_int",
    "is_bool", "is_i1", "to_i1", "from_i1", "is_half", "empty", "scalar_const", "zero", "one", "lowest", "highest",
    "filled", "identity_map", "broadcast_map", "affine_map", "generic", "elementwise",
    "reduce_dims", "reshape", "extract_scalar", "convert_scalar", "index_value",
    "to_index", "normalize_axes", "reduction_axes", "extract_slice", "insert_slice", "pad",
    "numel", "broadcast_to", "transpose", "maps_generic", "int_list", "scaled_index",
    "kernel_loops",
]

PARALLEL = "parallel"
REDUCTION = "reduction"


# --- types -------------------------------------------------------------------

def tensor_type(shape: Sequence[int], elt: ir.Type) -> ir.RankedTensorType:
    return ir.RankedTensorType.get([int(d) for d in shape], elt)


def is_float(t: ir.Type) -> bool:
    return isinstance(elt_of(t), (ir.F16Type, ir.BF16Type, ir.F32Type, ir.F64Type))


def is_half(t: ir.Type) -> bool:
    return isinstance(elt_of(t), (ir.F16Type, ir.BF16Type))


def is_int(t: ir.Type) -> bool:
    return isinstance(elt_of(t), ir.IntegerType)


def is_bool(t: ir.Type) -> bool:
    """i1 (a predicate) or i8 (how bool tensors are stored, see bools.py)."""
    e = elt_of(t)
    return isinstance(e, ir.IntegerType) and e.width in (1, 8)


def is_i1(t: ir.Type) -> bool:
    e = elt_of(t)
    return isinstance(e, ir.IntegerType) and e.width == 1


# --- scalars -----------------------------------------------------------------

def scalar_const(elt: ir.Type, value) -> ir.Value:
    """An ``arith.constant`` of scalar type ``elt`` (float, int or i1)."""
    if is_float(elt):
        return arith.constant(elt, float(value))
    if isinstance(elt, ir.IndexType):
        return arith.constant(elt, int(value))
    if is_bool(elt):
        return arith.constant(elt, ir.IntegerAttr.get(elt, 1 if value else 0))
    return arith.constant(elt, int(value))


def zero(elt):
    return scalar_const(elt, 0)


def one(elt):
    return scalar_const(elt, 1)


def lowest(elt: ir.Type) -> ir.Value:
    """-inf for floats, the smallest value for integers."""
    if is_float(elt):
        return scalar_const(elt, float("-inf"))
    if is_bool(elt):
        return scalar_const(elt, 0)
    return scalar_const(elt, -(1 << (elt.width - 1)))


def highest(elt: ir.Type) -> ir.Value:
    if is_float(elt):
        return scalar_const(elt, float("inf"))
    if is_bool(elt):
        return scalar_const(elt, 1)
    return scalar_const(elt, (1 << (elt.width - 1)) - 1)


def index_value(v: int) -> ir.Value:
    return arith.constant(ir.IndexType.get(), int(v))


def to_index(v: ir.Value) -> ir.Value:
    """An integer scalar as ``index``."""
    if isinstance(v.type, ir.IndexType):
        return v
    return arith.index_cast(ir.IndexType.get(), v)


def _float_width(t: ir.Type) -> int:
    if isinstance(t, ir.BF16Type):
        return 16
    return t.width


def to_i1(v: ir.Value) -> ir.Value:
    """A stored bool (i8, 0 or 1) as an i1 predicate."""
    if is_i1(v.type):
        return v
    return arith.trunci(ir.IntegerType.get_signless(1), v)


def from_i1(v: ir.Value, storage: ir.Type) -> ir.Value:
    """An i1 predicate as a stored bool of type ``storage`` (i8)."""
    if storage == v.type:
        return v
    return arith.extui(storage, v)


def convert_scalar(v: ir.Value, dst: ir.Type) -> ir.Value:
    """numpy's ``astype`` on one scalar: float -> int truncates toward zero,
    anything -> bool is ``!= 0`` (NaN is true), bool -> number is 0/1, other
    integers are signed.  Bools are i1 predicates or i8 stored bools (``dst``
    i8 means a stored bool).  Float -> bf16 rounds through f32 (as the
    interpreter)."""
    src = v.type
    if src == dst:
        return v
    f32 = ir.F32Type.get()
    if is_bool(dst):
        if is_bool(src):
            return from_i1(to_i1(v), dst)
        if is_float(src):
            return from_i1(arith.cmpf(arith.CmpFPredicate.UNE, v, zero(src)), dst)
        return from_i1(arith.cmpi(arith.CmpIPredicate.ne, v, zero(src)), dst)
    if is_float(src) and is_float(dst):
        if isinstance(dst, ir.BF16Type) and not isinstance(src, ir.F32Type):
            return convert_scalar(convert_scalar(v, f32), dst)
        if isinstance(src, ir.BF16Type) and isinstance(dst, ir.F16Type):
            return convert_scalar(convert_scalar(v, f32), dst)
        if _float_width(src) < _float_width(dst):
            return arith.extf(dst, v)
        return arith.truncf(dst, v)
    if is_float(src):  # float -> int
        return arith.fptosi(dst, v)
    if is_float(dst):  # int -> float
        if is_bool(src):
            return arith.uitofp(dst, v)
        return arith.sitofp(dst, v)
    # int -> int
    if is_bool(src):
        return arith.extui(dst, v)
    if src.width < dst.width:
        return arith.extsi(dst, v)
    return arith.trunci(dst, v)


# --- tensors -------------------------------------------------------------------

def empty(shape: Sequence[int], elt: ir.Type) -> ir.Value:
    return tensor.EmptyOp([int(d) for d in shape], elt).result


def filled(shape: Sequence[int], elt: ir.Type, value) -> ir.Value:
    """A tensor of ``shape`` filled with ``value`` (a number or a scalar
    ``ir.Value``) by ``linalg.fill``."""
    if not isinstance(value, ir.Value):
        value = scalar_const(elt, value)
    return linalg.fill(value, outs=[empty(shape, elt)])


def extract_scalar(v: ir.Value) -> ir.Value:
    """The element of a tensor with a single element."""
    idx = [index_value(0) for _ in shape_of(v)]
    return tensor.extract(v, idx)


def identity_map(rank: int) -> ir.AffineMap:
    return ir.AffineMap.get_identity(rank)


def affine_map(num_dims: int, exprs) -> ir.AffineMap:
    """``(d0..dn-1) -> (exprs)``; ints in ``exprs`` are loop dims."""
    out = []
    for e in exprs:
        out.append(ir.AffineDimExpr.get(e) if isinstance(e, int) else e)
    return ir.AffineMap.get(num_dims, 0, out)


def broadcast_map(shape: Sequence[int], out_shape: Sequence[int]) -> ir.AffineMap:
    """Indexing map reading an operand of ``shape`` that numpy-broadcasts to
    ``out_shape`` (trailing alignment; stretched unit dims read index 0)."""
    n, r = len(out_shape), len(shape)
    exprs = []
    for i, d in enumerate(shape):
        j = n - r + i
        if d == 1 and out_shape[j] != 1:
            exprs.append(ir.AffineConstantExpr.get(0))
        else:
            exprs.append(ir.AffineDimExpr.get(j))
    return ir.AffineMap.get(n, 0, exprs)


def _iterators(kinds: Sequence[str]) -> ir.ArrayAttr:
    # One parse of the whole array: a linalg attribute handed to Python on its
    # own would import mlir.dialects.linalg (see _compat.linalg).
    return ir.Attribute.parse(
        "[" + ", ".join(f"#linalg.iterator_type<{k}>" for k in kinds) + "]")


def generic(inputs: Sequence[ir.Value], inits: Sequence[ir.Value],
            maps: Sequence[ir.AffineMap], iterators: Sequence[str],
            body: Callable[..., Sequence[ir.Value]]) -> list[ir.Value]:
    """A ``linalg.generic``.  ``body(*input_scalars, *init_scalars)`` builds
    the payload and returns the values to yield (one per init)."""
    g = linalg.GenericOp([v.type for v in inits], list(inputs), list(inits),
                         ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
                         _iterators(iterators))
    elts = [elt_of(v) for v in list(inputs) + list(inits)]
    block = g.regions[0].blocks.append(*elts)
    with ir.InsertionPoint(block):
        ys = body(*block.arguments)
        if isinstance(ys, ir.Value):
            ys = [ys]
        linalg.YieldOp(list(ys))
    return list(g.results)


def elementwise(inputs: Sequence[ir.Value], out_shape: Sequence[int], out_elt: ir.Type,
                body: Callable[..., ir.Value]) -> ir.Value:
    """An all-parallel ``linalg.generic`` over ``out_shape`` reading each
    input with numpy broadcasting; ``body(*input_scalars)`` returns the
    result scalar."""
    rank = len(out_shape)
    maps = [broadcast_map(shape_of(v), out_shape) for v in inputs] + [identity_map(rank)]
    init = empty(out_shape, out_elt)
    n = len(inputs)
    return generic(inputs, [init], maps, [PARALLEL] * rank,
                   lambda *args: [body(*args[:n])])[0]


def maps_generic(inputs, maps, out_shape, elt, body):
    """An all-parallel generic over ``out_shape`` with explicit input maps."""
    rank = len(out_shape)
    n = len(inputs)
    return generic(inputs, [empty(out_shape, elt)], list(maps) + [identity_map(rank)],
                   [PARALLEL] * rank, lambda *a: [body(*a[:n])])[0]


def reduce_dims(shape: Sequence[int], dims: Sequence[int]) -> list[int]:
    """``shape`` without ``dims``."""
    drop = set(dims)
    return [d for i, d in enumerate(shape) if i not in drop]


# --- reshapes and slices -----------------------------------------------------

def _reassociation(src: Sequence[int], dst: Sequence[int]):
    """Groups of ``src`` dims whose products give ``dst``'s dims (a collapse
    from ``src`` to ``dst``), or None.  Trailing unit dims join the last group."""
    if not dst:
        return [] if all(d == 1 for d in src) else None
    groups, i = [], 0
    for d in dst:
        if i >= len(src):
            return None
        group, prod = [i], src[i]
        i += 1
        while prod < d and i < len(src):
            group.append(i)
            prod *= src[i]
            i += 1
        if prod != d:
            return None
        groups.append(group)
    while i < len(src):
        if src[i] != 1:
            return None
        groups[-1].append(i)
        i += 1
    return groups


def _reassoc_attr(groups) -> ir.ArrayAttr:
    i64 = ir.IntegerType.get_signless(64)
    return ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(i64, d) for d in g])
                             for g in groups])


def _collapse(v: ir.Value, dst: Sequence[int], groups) -> ir.Value:
    return tensor.collapse_shape(tensor_type(dst, elt_of(v)), v, _reassoc_attr(groups))


def _expand(v: ir.Value, dst: Sequence[int], groups) -> ir.Value:
    return tensor.expand_shape(tensor_type(dst, elt_of(v)), v, _reassoc_attr(groups), [],
                               [int(d) for d in dst])


def _common_shape(src: Sequence[int], dst: Sequence[int]):
    """The shape whose dims end where both ``src``'s and ``dst``'s running
    products agree (None when that is 1-D or empty, or a size is 0)."""
    if not src or not dst or 0 in src or 0 in dst:
        return None

    def ends(shape):
        out, p = set(), 1
        for d in shape:
            p *= d
            out.add(p)
        return out

    cuts = sorted((ends(src) & ends(dst)) - {1})
    if len(cuts) < 2:
        return None
    return [b // a for a, b in zip([1] + cuts[:-1], cuts)]


def reshape(v: ir.Value, shape: Sequence[int]) -> ir.Value:
    """``v`` with the same elements (row-major) and shape ``shape``, by
    ``tensor.collapse_shape``/``tensor.expand_shape`` (views, no copy)."""
    src = shape_of(v)
    dst = [int(d) for d in shape]
    if src == dst:
        return v
    groups = _reassociation(src, dst)
    if groups is not None:
        return _collapse(v, dst, groups)
    groups = _reassociation(dst, src)
    if groups is not None:
        return _expand(v, dst, groups)
    n = numel(src)
    common = _common_shape(src, dst)
    if common is not None:
        # Through the finest shape both collapse to: (64,1,28,28) -> (1,64,28,28)
        # goes via (64,28,28), not via a 1-D view (whose loads fold into
        # div/mod index arithmetic per element).
        down, up = _reassociation(src, common), _reassociation(dst, common)
        if down is not None and up is not None:
            return _expand(_collapse(v, common, down), dst, up)
    flat = _collapse(v, [n], [list(range(len(src)))]) if src else _expand(v, [1], [])
    if not dst:
        return _collapse(flat, [], [])
    return _expand(flat, dst, [list(range(len(dst)))])


def _mixed(values):
    """Static ints and dynamic ``index`` Values -> (dynamic list, static list)."""
    dyn, static = [], []
    for v in values:
        if isinstance(v, ir.Value):
            dyn.append(v)
            static.append(ir.ShapedType.get_dynamic_stride_or_offset())
        else:
            static.append(int(v))
    return dyn, static


def extract_slice(v: ir.Value, offsets, sizes, strides=None) -> ir.Value:
    """``tensor.extract_slice``; offsets may hold ``index`` Values."""
    strides = strides or [1] * len(offsets)
    t = tensor_type(sizes, elt_of(v))
    dyn, static = _mixed(offsets)
    return tensor.extract_slice(t, v, dyn, [], [], static, [int(s) for s in sizes],
                                [int(s) for s in strides])


def insert_slice(src: ir.Value, dest: ir.Value, offsets, strides=None) -> ir.Value:
    """``tensor.insert_slice``; offsets may hold ``index`` Values."""
    sizes = shape_of(src)
    strides = strides or [1] * len(offsets)
    dyn, static = _mixed(offsets)
    return tensor.insert_slice(src, dest, dyn, [], [], static, [int(s) for s in sizes],
                               [int(s) for s in strides])


def pad(v: ir.Value, low: Sequence[int], high: Sequence[int], value) -> ir.Value:
    """``tensor.pad`` with a constant ``value`` (number or scalar Value)."""
    if not any(low) and not any(high):
        return v
    elt = elt_of(v)
    shape = [d + lo + hi for d, lo, hi in zip(shape_of(v), low, high)]
    op = tensor.PadOp(tensor_type(shape, elt), v, [], [], [int(x) for x in low],
                      [int(x) for x in high])
    block = op.regions[0].blocks.append(*[ir.IndexType.get()] * len(shape))
    with ir.InsertionPoint(block):
        pad_value = value if isinstance(value, ir.Value) else scalar_const(elt, value)
        tensor.YieldOp(pad_value)
    return op.result


def broadcast_to(v: ir.Value, out_shape: Sequence[int]) -> ir.Value:
    """numpy ``broadcast_to``: drops the stretched unit dims (a view), then
    ``linalg.broadcast`` adds the missing dims."""
    src = shape_of(v)
    out_shape = [int(d) for d in out_shape]
    if src == out_shape:
        return v
    n, r = len(out_shape), len(src)
    kept = [i for i, d in enumerate(src) if not (d == 1 and out_shape[n - r + i] != 1)]
    v = reshape(v, [src[i] for i in kept])
    kept_out = {n - r + i for i in kept}
    added = [j for j in range(n) if j not in kept_out]
    if not added:
        return v
    return linalg.broadcast(v, outs=[empty(out_shape, elt_of(v))], dimensions=added).results[0]


def transpose(v: ir.Value, perm: Sequence[int]) -> ir.Value:
    """``linalg.transpose`` (the identity permutation returns ``v``)."""
    perm = [int(p) for p in perm]
    if perm == sorted(perm):
        return v
    shape = shape_of(v)
    init = empty([shape[p] for p in perm], elt_of(v))
    return linalg.transpose(v, outs=[init], permutation=perm).results[0]


# --- windows of NCHW ops (convolution and pooling) ----------------------------

def int_list(attrs, name, default):
    """The list attribute ``name`` of ``attrs`` (``attributes_of``), or
    ``default`` when absent (strides, padding, dilation, pool_size)."""
    v = attrs.get(name)
    return list(default) if v is None else list(v)


def scaled_index(i, factor):
    """``i * factor`` for an ``index`` Value ``i`` and an int ``factor``."""
    return i if factor == 1 else arith.muli(i, index_value(factor))


def kernel_loops(kernel, init, body):
    """``body(ky, kx, acc) -> acc'`` for every kernel offset (ky, kx) in
    row-major order, as an ``scf.for`` over ky around one over kx carrying
    the tensor ``init`` (``ky``/``kx`` are ``index`` Values): one copy of the
    body's loop nest for the whole kernel, not one per offset (issue 14,
    compile time: each nest costs MLIR passes, LLVM optimization and code
    generation)."""
    kh, kw = kernel
    outer = scf.ForOp(index_value(0), index_value(kh), index_value(1), [init])
    with ir.InsertionPoint(outer.body):
        inner = scf.ForOp(index_value(0), index_value(kw), index_value(1),
                          [outer.inner_iter_args[0]])
        with ir.InsertionPoint(inner.body):
            scf.YieldOp([body(outer.induction_variable, inner.induction_variable,
                              inner.inner_iter_args[0])])
        scf.YieldOp([inner.results[0]])
    return outer.results[0]


# The attribute by which a lowering asks for the run-time range check of the
# indices a generic reads as its first input (conversion/cpu/runtime_checks.py,
# add_index_checks, which removes it): [op name, least, bound, ignore or
# "", what the bound is].  Set only while ``index_checks(True)`` holds
# (rlx-to-linalg's ``index-checks`` option; per thread, as ``sum_blocks``).
INDEX_CHECK = "gradir.index_check"
_INDEX_CHECKS = threading.local()


@contextlib.contextmanager
def index_checks(enabled: bool):
    saved, _INDEX_CHECKS.value = getattr(_INDEX_CHECKS, "value", False), enabled
    try:
        yield
    finally:
        _INDEX_CHECKS.value = saved


def mark_index_check(result: ir.Value, op_name: str, least: int, bound: int,
                     ignore: int | None, what: str) -> None:
    """Asks for the run-time check least <= i < bound (i != ``ignore``) of
    the indices read by the generic that made ``result`` (when
    ``index_checks`` is on)."""
    if not getattr(_INDEX_CHECKS, "value", False):
        return
    i64 = ir.IntegerType.get_signless(64)
    owner = result.owner
    owner = owner.operation if hasattr(owner, "operation") else owner
    owner.attributes[INDEX_CHECK] = ir.ArrayAttr.get([
        ir.StringAttr.get(op_name), ir.IntegerAttr.get(i64, least), ir.IntegerAttr.get(i64, bound),
        ir.StringAttr.get("") if ignore is None else ir.IntegerAttr.get(i64, ignore),
        ir.StringAttr.get(what)])
