"""Padded convolution inputs read in place, for gpu-linalg-to-kernels.

``rlx-to-linalg{direct-convolutions=true}`` pads a convolution's input with
``tensor.pad`` (a conv2d_transpose's also zero-inserts it: a strided
``tensor.insert_slice`` into zeros); bufferized, that is a buffer ``P``
zero-filled by one generic, a ``memref.subview`` ``V`` of it at static
offsets (and strides), and a generic writing ``V`` a copy of the input
``X`` (a copy generic, or an output of the generic computing ``X``, which
gpu-fuse-generics gave a second output)::

    %p = gpu.alloc() : memref<2x16x8x8xf32>
    linalg.generic outs(%p) { yield %zero }                       // fill
    %v = memref.subview %p[0, 0, 1, 1] [2, 16, 6, 6] [1, 1, 1, 1]
    linalg.generic ins(%x) outs(%v) { yield %in }                 // copy
    linalg.generic ins(%w, %p) outs(%out) {...}                   // the conv's GEMM

When every other reader of ``P`` is a generic that becomes an implicit-GEMM
kernel, ``fold_padded_inputs`` drops the fill, the copy (or the extra
output) and the view, and records on each reader that its operand ``P`` is
``X`` padded (``kernels.common.PaddedInput``): the GEMM's tile loads read
``X`` with a bounds mask (``kernels.common.read_input``).  ``X`` must not be
written from the copy to the last reader (a deallocation of it there moves
after that reader).  Nothing changes for a reader that does not become a
GEMM kernel (``tiled=false``, a non-GEMM reduction): the IR stays valid.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import gpu, memref

from ... import _compat
from .buffer_effects import effects_of, region_of
from .common import walk
from .kernels.common import PaddedInput, as_op, outputs_of

__all__ = ["fold_padded_inputs", "erase_folded_buffers"]

_ALLOCS = frozenset({"gpu.alloc", "memref.alloc"})
_FREES = frozenset({"gpu.dealloc", "memref.dealloc"})


@dataclass
class _Fold:
    buffer: ir.Value          # P
    fill: ir.Operation
    fill_out: int             # P's output number in the fill
    view: ir.Operation        # V
    writer: ir.Operation      # W
    writer_out: int           # V's output number in W
    source: ir.Value          # X
    geometry: tuple           # V's (offsets, sizes, strides) in P
    readers: list             # (op, input numbers reading P)
    frees: list               # deallocations of X to move after the last reader
    view_readers: list        # generics reading V (X is then a new buffer)
    last: ir.Operation        # the last reader of P or V


def fold_padded_inputs(fn: ir.Operation, becomes_gemm) -> tuple[list, list]:
    """Folds the padded inputs of ``fn``'s GEMM generics (the module
    docstring; ``becomes_gemm(op)``: whether the generic ``op`` will be a
    GEMM kernel).  Returns ``(readers, buffers)``: ``(op, {input number:
    PaddedInput})`` per reader, and the buffers ``P`` left to
    ``erase_folded_buffers`` once the readers are lowered."""
    readers, buffers = [], []
    allocs = [op for op in walk(fn, into_kernels=False) if op.name in _ALLOCS]
    for alloc in allocs:
        fold = _match(alloc.results[0], becomes_gemm)
        if fold is None:
            continue
        _apply(fold)
        buffers.append(fold.buffer)
        pad = _padded_input(fold)
        for op, ks in fold.readers:
            entry = next((d for r, d in readers if r == op), None)
            if entry is None:
                entry = {}
                readers.append((op, entry))
            entry.update({k: pad for k in ks})
    return readers, buffers


def erase_folded_buffers(buffers: list) -> None:
    """Erases each folded ``P`` (its allocation and deallocations) once
    nothing else uses it."""
    for p in buffers:
        uses = _compat.uses_of(p)
        if any(user.name not in _FREES for user, _ in uses):
            continue
        for user, _ in uses:
            user.erase()
        _compat.defining_op(p).erase()


# --- matching -----------------------------------------------------------------------

def _match(p: ir.Value, becomes_gemm) -> _Fold | None:
    """The fold of the buffer ``p`` (the module docstring), or None: its
    users a zero fill, one static subview written once, deallocations and
    GEMM readers, all in one block in that order."""
    t = p.type
    if not isinstance(t, ir.MemRefType) or not t.has_static_shape:
        return None
    fills, views, readers = [], [], []
    for user, number in _compat.uses_of(p):
        if user.name in _FREES:
            continue
        elif user.name == "memref.subview" and number == 0:
            views.append(user)
        elif user.name == "linalg.generic":
            n_in = len(user.operands) - len(outputs_of(user))
            if number >= n_in:
                fills.append((user, number - n_in))
            else:
                readers.append(user)
        else:
            return None
    if len(fills) != 1 or len(views) != 1 or not readers:
        return None
    (fill, fill_out), view = fills[0], views[0]
    if not _zero_fill(fill, fill_out):
        return None
    geometry = _view_geometry(view, t)
    if geometry is None:
        return None
    written, view_readers = _writer(view), []
    if written is None:
        computed = _computed_into(view)
        if computed is None:
            return None
        writer, writer_out, view_readers = computed
        source = None           # a buffer of its own, made by _apply
    else:
        writer, writer_out, source = written
        if source.type.element_type != t.element_type:
            return None
    ops = [as_op(o) for o in writer.block.operations]

    def at(op):
        return next((i for i, o in enumerate(ops) if o == op), None)

    w_at, f_at = at(writer), at(fill)
    if w_at is None or f_at is None or f_at > w_at:
        return None
    reads, last = [], w_at
    for op in _unique(readers):
        r_at = at(op)
        if r_at is None or r_at < w_at or not _reader_ok(op, p, becomes_gemm):
            return None
        n_in = len(op.operands) - len(outputs_of(op))
        reads.append((op, [k for k in range(n_in) if op.operands[k] == p]))
        last = max(last, r_at)
    for op in view_readers:
        r_at = at(op)
        if r_at is None or r_at < w_at:
            return None
        last = max(last, r_at)
    moved = _window_ok(ops[w_at + 1:last + 1], source) if source is not None else []
    if moved is None:
        return None
    return _Fold(buffer=p, fill=fill, fill_out=fill_out, view=view, writer=writer,
                 writer_out=writer_out, source=source, geometry=geometry, readers=reads,
                 frees=[(f, ops[last]) for f in moved], view_readers=view_readers,
                 last=ops[last])


def _unique(ops: list) -> list:
    out = []
    for op in ops:
        if not any(op == o for o in out):
            out.append(op)
    return out


def _parallel(op: ir.Operation) -> bool:
    return all("parallel" in str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"]))


def _maps(op: ir.Operation) -> list:
    return [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]


def _zero_constant(v: ir.Value) -> bool:
    op = _compat.defining_op(v)
    if op is None or op.name != "arith.constant":
        return False
    attr = op.attributes["value"]
    if isinstance(attr, ir.FloatAttr):
        return attr.value == 0.0 and not str(attr).lstrip().startswith("-")
    if isinstance(attr, ir.IntegerAttr):
        return attr.value == 0
    return False


def _zero_fill(op: ir.Operation, j: int) -> bool:
    """Output ``j`` of the all-parallel generic ``op`` is set to zero
    everywhere (an identity map; the yielded value a zero constant, or a
    block argument of a zero scalar input)."""
    if not _parallel(op):
        return False
    outs = outputs_of(op)
    n_in = len(op.operands) - len(outs)
    amap = _maps(op)[n_in + j]
    if amap != ir.AffineMap.get_identity(len(outs[j].type.shape)) or \
            amap.n_dims != len(outs[j].type.shape):
        return False
    block = op.regions[0].blocks[0]
    y = as_op(list(block.operations)[-1]).operands[j]
    if isinstance(y.owner, ir.Block) and y.owner == block:
        k = ir.BlockArgument(y).arg_number
        return k < n_in and not isinstance(op.operands[k].type, ir.ShapedType) and \
            _zero_constant(op.operands[k])
    return _zero_constant(y)


def _view_geometry(view: ir.Operation, t: ir.MemRefType):
    """(offsets, sizes, strides) of a static subview of the same rank."""
    try:
        offs = list(ir.DenseI64ArrayAttr(view.attributes["static_offsets"]))
        sizes = list(ir.DenseI64ArrayAttr(view.attributes["static_sizes"]))
        strides = list(ir.DenseI64ArrayAttr(view.attributes["static_strides"]))
    except (KeyError, ValueError):
        return None
    dyn = ir.ShapedType.get_dynamic_size()
    dyn_so = ir.ShapedType.get_dynamic_stride_or_offset()
    rank = len(t.shape)
    if len(view.operands) != 1 or len(offs) != rank or len(view.results[0].type.shape) != rank:
        return None
    if any(v in (dyn, dyn_so) for v in offs + sizes + strides) or min(strides) < 1:
        return None
    if list(view.results[0].type.shape) != sizes:
        return None
    return offs, sizes, strides


def _writer(view: ir.Operation):
    """``(W, j, X)``: the only user of the view, a generic writing it as its
    output ``j`` with a copy of ``X``'s elements (an input or another
    output of W yielding the same value at the same point), or None."""
    v = view.results[0]
    uses = _compat.uses_of(v)
    if len(uses) != 1 or uses[0][0].name != "linalg.generic":
        return None
    w, number = uses[0]
    outs = outputs_of(w)
    n_in = len(w.operands) - len(outs)
    j = number - n_in
    if j < 0 or not _parallel(w):
        return None
    maps = _maps(w)
    mj = maps[n_in + j]
    if not mj.is_permutation:
        return None
    block = w.regions[0].blocks[0]
    if list(block.arguments[n_in + j].uses):
        return None
    yields = list(as_op(list(block.operations)[-1]).operands)
    y = yields[j]
    shape = list(v.type.shape)
    for i, out in enumerate(outs):
        if i != j and yields[i] == y and maps[n_in + i] == mj and \
                list(out.type.shape) == shape:
            return w, j, out
    if isinstance(y.owner, ir.Block) and y.owner == block:
        k = ir.BlockArgument(y).arg_number
        if k < n_in and isinstance(w.operands[k].type, ir.MemRefType) and \
                maps[k] == mj and list(w.operands[k].type.shape) == shape:
            src = region_of(w.operands[k])
            if not any(region_of(o).overlaps(src) for i, o in enumerate(outs) if i != j):
                return w, j, w.operands[k]
    return None


def _computed_into(view: ir.Operation):
    """``(W, j, readers)`` when the view's first user is an all-parallel
    generic ``W`` computing its output ``j`` (the view, every element) from
    other values (a conv2d_transpose's output gradient computed straight
    into the zero-inserted buffer) and its other users are generics reading
    it as an input (``readers``): ``W`` can write a buffer of its own
    instead, the readers read that; else None."""
    v = view.results[0]
    w, j, readers = None, None, []
    for user, number in _compat.uses_of(v):
        if user.name != "linalg.generic":
            return None
        outs = outputs_of(user)
        n_in = len(user.operands) - len(outs)
        if number < n_in:
            readers.append(user)
            continue
        if w is not None or any(o == v for o in user.operands[:n_in]):
            return None
        w, j = user, number - n_in
    if w is None or not _parallel(w) or any(w == r for r in readers):
        return None
    n_in = len(w.operands) - len(outputs_of(w))
    if not _maps(w)[n_in + j].is_permutation:
        return None
    if list(w.regions[0].blocks[0].arguments[n_in + j].uses):
        return None
    return w, j, _unique(readers)


def _reader_ok(op: ir.Operation, p: ir.Value, becomes_gemm) -> bool:
    """``op`` reads ``p`` as inputs only, through maps that are not all
    plain dims (so no cp.async or TMA plan reads ``p``'s memory layout:
    ``mma_pipeline.async_operand``), and becomes a GEMM kernel."""
    outs = outputs_of(op)
    if any(o == p for o in outs):
        return False
    n_in = len(op.operands) - len(outs)
    maps = _maps(op)
    for k in range(n_in):
        if op.operands[k] == p and all(isinstance(e, ir.AffineDimExpr)
                                       for e in maps[k].results):
            return False
    return becomes_gemm(op)


def _window_ok(ops: list, source: ir.Value):
    """The deallocations of ``source`` among ``ops`` (to move after them),
    or None when one of ``ops`` may write it."""
    src = region_of(source)
    moved = []
    for op in ops:
        if op.name in _FREES and region_of(op.operands[0]).key == src.key \
                and src.kind == "alloc":
            moved.append(op)
            continue
        eff = effects_of(op)
        if eff.barrier or any(w.overlaps(src) for w in eff.writes):
            return None
    return moved


# --- rewriting ----------------------------------------------------------------------

def _apply(fold: _Fold) -> None:
    for free, after in fold.frees:
        free.move_after(after)
    if fold.source is None:
        fold.source = _own_buffer(fold)
    else:
        _drop_output(fold.writer, fold.writer_out)
    fold.view.erase()
    _drop_output(fold.fill, fold.fill_out)


def _own_buffer(fold: _Fold) -> ir.Value:
    """A new buffer ``X`` of the view's shape that the writer computes into
    instead of the view and the view's readers read instead, freed after
    the last reader."""
    v = fold.view.results[0]
    t = ir.MemRefType.get(list(v.type.shape), v.type.element_type)
    on_device = _compat.defining_op(fold.buffer).name == "gpu.alloc"
    with ir.InsertionPoint(fold.writer), fold.writer.location:
        x = (gpu.AllocOp(t, None, [], [], []) if on_device else memref.AllocOp(t, [], [])).result
    for op in [fold.writer] + fold.view_readers:
        for i, operand in enumerate(list(op.operands)):
            if operand == v:
                op.operands[i] = x
    after = fold.last
    with ir.InsertionPoint(after), after.location:
        free = gpu.DeallocOp(None, [], x) if on_device else memref.DeallocOp(x)
    as_op(free).move_after(after)
    return x


def _padded_input(fold: _Fold) -> PaddedInput:
    offs, sizes, strides = fold.geometry
    return PaddedInput(source=fold.source, offsets=tuple(offs), sizes=tuple(sizes),
                       strides=tuple(strides))


def _drop_output(op: ir.Operation, j: int) -> None:
    """Erases output ``j`` of the generic ``op`` (its block argument
    unused): the whole op when it was the only one."""
    outs = outputs_of(op)
    if len(outs) == 1:
        op.erase()
        return
    n_in = len(op.operands) - len(outs)
    maps = _maps(op)
    del maps[n_in + j]
    keep = [i for i in range(len(op.operands)) if i != n_in + j]
    attrs = {name: op.attributes[name] for name in op.attributes}
    attrs["indexing_maps"] = ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps])
    attrs["operandSegmentSizes"] = ir.DenseI32ArrayAttr.get([n_in, len(outs) - 1])
    loc = op.location
    new = ir.Operation.create("linalg.generic", results=[],
                              operands=[op.operands[i] for i in keep], attributes=attrs,
                              regions=1, loc=loc, ip=ir.InsertionPoint(op))
    old = op.regions[0].blocks[0]
    args = list(old.arguments)
    types = [args[i].type for i in keep]
    block = new.regions[0].blocks.append(*types, arg_locs=[loc] * len(types))
    mapping = {args[i]: a for i, a in zip(keep, block.arguments)}
    body = [as_op(o) for o in old.operations]
    with ir.InsertionPoint(block), loc:
        for inner in body[:-1]:
            clone = inner.clone(ip=ir.InsertionPoint(block))
            _remap(clone, mapping)
            for a, b in zip(inner.results, clone.results):
                mapping[a] = b
        yields = [mapping.get(v, v) for i, v in enumerate(body[-1].operands) if i != j]
        ir.Operation.create("linalg.yield", results=[], operands=yields)
    op.erase()


def _remap(op: ir.Operation, mapping: dict) -> None:
    for i, v in enumerate(list(op.operands)):
        if v in mapping:
            op.operands[i] = mapping[v]
    for region in op.regions:
        for blk in region.blocks:
            for inner in blk.operations:
                _remap(as_op(inner), mapping)
