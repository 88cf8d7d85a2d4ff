"""rlx-conv-kernels: marked convolutions on buffers become calls of the implicit-GEMM kernel."""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from ... import _compat
from ...passes.base import ModulePass, option
from .conv_kernels import (CONV_ELEMENT_TYPES, _matrix_type, conv_memref_type, conv_name,
                           conv_type, convw_name, convw_type)
from .rlx_matmul_kernels import _const, _declare, _zero_start, kernel_target

ATTR = "gradir.conv_kernel"
# the weight gradient's form: the output (O, N, OH, OW), one GEMM over the
# columns of every image (conv_kernels.convw_driver)
ATTR_W = "gradir.wgrad_conv_kernel"
# The output's zero fill just before a marked generic is dropped
# (``_drop_zero_fill``).
DROP_ZERO_FILL = True


@dataclass(frozen=True)
class RlxConvKernels(ModulePass):
    """Turns marked convolutions on buffers into calls of the implicit-GEMM kernel.

    ``rlx-to-linalg{matmul-kernels=true}`` lowers a conv2d of one group (and
    stride 1) as ``linalg.generic {gradir.conv_kernel = array<i64: kh, kw,
    sh, sw, dh, dw>}`` over (n, o, oy, ox, c, ky, kx) reading the packed
    weights (O, C*KH*KW), the padded images (N, C, Hp, Wp) and a (c, ky, kx)
    shape operand, writing the output (N, O, OH, OW).  Once bufferized it
    becomes a call of ``gradir_kernel_<variant>_conv_<elt>`` (``conv_kernels.py``):

        linalg.fill ins(%zero : f32) outs(%y : memref<2x32x16x16xf32>)
        linalg.generic {..., gradir.conv_kernel = array<i64: 3, 3, 1, 1, 1, 1>}
            ins(%w, %xp, %s : memref<32x288xf32>, memref<2x32x18x18xf32>, memref<32x3x3xf32>)
            outs(%y : memref<2x32x16x16xf32>)
    becomes
        %0 = memref.cast %w : ... to memref<?x?xf32, strided<[?, ?], offset: ?>>
        %1 = memref.cast %xp ..., %2 = memref.cast %y ...
        call @gradir_kernel_<variant>_conv_f32(%0, %1, %2, %true, %c3, %c3, %c1, %c1, %c1, %c1)

    the zero fill left out when nothing between it and the generic touches
    the output (the kernel then writes without reading).  An op whose output
    is not contiguous per image (OW and OH*OW apart along its channels and
    rows) keeps its loops.  ``gradir.wgrad_conv_kernel`` (the same array) marks
    the same generic writing the output channels first, (O, N, OH, OW),
    whose (N, OH, OW) are contiguous (else it keeps its loops): a call of
    ``gradir_kernel_<variant>_wgrad_conv_<elt>`` (``conv_kernels.py``, one GEMM
    over the columns of every image: the weight gradient's form, a few
    output pixels per image), then the columns (n, oy, ox) it computes,
    all of them or, threads > 1, a range each.  Images copied by a
    ``linalg.copy`` just before the generic (rlx-to-linalg's shield against
    elementwise fusion) are read from the copy's source, and the copy and
    its buffer dropped, when the kernel takes that layout.  Images read
    with their first two dims swapped (the images map ``(d4, d0, ...)``:
    the weight gradient's data, NCHW read as (C, N, H, W) through the map,
    conv.py's SWAPPED_IMAGES) are given to the kernel as a
    ``memref.transpose`` view.  Run after bufferization, before
    ``convert-linalg-to-loops``.
    """

    name = "rlx-conv-kernels"

    cpu: str = option("host", "the CPU whose kernel library the calls go to (host or a name "
                              "of gradir.conversion.cpu.host.NAMED_TARGETS)")
    threads: int = option(1, "threads the code runs on: a convolution of enough work (the "
                             "pipeline's hot-min-work) runs as an scf.parallel over that many "
                             "blocks of images (the weight gradient's kernel: ranges of its "
                             "columns), one kernel call each (each image or column computed "
                             "by one call: the same bits at any thread count)")

    def check_options(self):
        if self.threads < 1:
            raise self.bad_option("threads", "be at least 1", self.threads)

    def apply(self, module: ir.Operation) -> None:
        from .kernels import variant
        target = kernel_target(self, module)
        module = module.operation
        ops = _compat.collect_ops(module, lambda o: o.name == "linalg.generic"
                                  and (ATTR in o.attributes or ATTR_W in o.attributes))
        if not ops:
            return
        var = variant(target)
        needed = set()
        for op in ops:
            problem = _problem(op)
            if problem:
                self.error(op, problem)
                raise self.failure()
            _read_in_place(op)
            if not _layout_ok(op):
                continue
            elt = str(ir.MemRefType(op.operands[-1].type).element_type)
            wgrad = _attr(op) == ATTR_W
            name = (convw_name if wgrad else conv_name)(elt, var)
            _replace(op, name, elt, self.threads)
            needed.add((name, (convw_type if wgrad else conv_type)(elt)))
        _declare(module, sorted(needed))


def _attr(op) -> str:
    return ATTR_W if ATTR_W in op.attributes else ATTR


def _problem(op) -> str | None:
    what = f"a {_attr(op)} generic"
    if ATTR in op.attributes and ATTR_W in op.attributes:
        return f"{what} must not be marked {ATTR} as well"
    if len(op.operands) != 4 or op.results:
        return f"{what} must read weights, images and a shape operand and write an output, " \
               "on buffers"
    types = [op.operands[i].type for i in range(4)]
    if not all(isinstance(t, ir.MemRefType) for t in types):
        return f"{what} must be on buffers"
    ranks = [ir.MemRefType(t).rank for t in types]
    if ranks != [2, 4, 3, 4]:
        return f"{what} must read a 2-D weight matrix and 4-D images, write a 4-D output"
    elts = {str(ir.MemRefType(t).element_type) for t in types}
    if len(elts) != 1 or next(iter(elts)) not in CONV_ELEMENT_TYPES:
        return f"{what} must have one element type, one of " + ", ".join(CONV_ELEMENT_TYPES)
    try:
        geom = list(ir.DenseI64ArrayAttr(op.attributes[_attr(op)]))
    except (TypeError, ValueError):
        geom = []
    if len(geom) != 6 or min(geom) < 1:
        return f"{what}'s attribute must be array<i64: kh, kw, sh, sw, dh, dw>, all positive"
    try:
        xmap = ir.AffineMapAttr(ir.ArrayAttr(op.attributes["indexing_maps"])[1]).value
        lead = [str(e) for e in xmap.results[:2]]
    except (KeyError, TypeError, ValueError, IndexError):
        lead = []
    if lead not in (["d0", "d4"], ["d4", "d0"]):
        return f"{what} must read its images at (d0, d4, ...) or, swapped, (d4, d0, ...)"
    return None


def _swapped(op) -> bool:
    """The images read with their first two dims swapped (``_problem`` has
    checked the map)."""
    xmap = ir.AffineMapAttr(ir.ArrayAttr(op.attributes["indexing_maps"])[1]).value
    return str(xmap.results[0]) == "d4"


def _images_view(op, images):
    """``images`` as the kernel reads them: a ``memref.transpose`` of its
    first two dims when the op reads them swapped (created before ``op``)."""
    if not _swapped(op):
        return images
    t = ir.MemRefType(images.type)
    strides, offset = t.get_strides_and_offset()
    view = ir.MemRefType.get(_swap01(t.shape), t.element_type,
                             ir.StridedLayoutAttr.get(offset, _swap01(strides)),
                             t.memory_space)
    perm = ir.AffineMap.get_permutation([1, 0, 2, 3])
    with ir.InsertionPoint(op), op.location:
        return ir.Operation.create("memref.transpose", results=[view], operands=[images],
                                   attributes={"permutation": ir.AffineMapAttr.get(perm)}
                                   ).results[0]


def _swap01(v):
    return [v[1], v[0]] + list(v[2:])


def _read_in_place(op) -> None:
    """The images as the buffer the ``linalg.copy`` just before ``op``
    copied them from (``conv.py`` reads them through one, a named op that
    elementwise fusion leaves alone), when the kernel takes its layout: the
    copy and its buffer are dropped.  Else the copy stays."""
    from .rlx_pool_kernels import _copy_source, _drop_if_unused, _just_before
    x = op.operands[1]
    copy = _just_before(op, ("memref.alloc",))
    if copy is None or copy.name != "linalg.copy" or copy.operands[1] != x:
        return
    if _layout_ok(op, copy.operands[0]):
        source = _copy_source(op, x)
        if source != x:
            op.operands[1] = source
            _drop_if_unused(x)


def _layout_ok(op, images=None) -> bool:
    """Static shapes, unit innermost strides, and an output whose image is
    one (O, OH*OW) matrix (with ATTR_W: whose (N, OH, OW) are contiguous,
    and images whose channels and rows do not overlap: the kernel's loads
    of a run's lanes start before the run, inside the image).  ``images``:
    a buffer to read instead of the op's own images operand."""
    images = op.operands[1] if images is None else images
    for v in (op.operands[0], images, op.operands[3]):
        t = ir.MemRefType(v.type)
        if not t.has_static_shape:
            return False
        try:
            strides, _ = t.get_strides_and_offset()
        except (ValueError, ir.MLIRError):
            return False
        if strides[-1] != 1:
            return False
    y = ir.MemRefType(op.operands[3].type)
    strides, _ = y.get_strides_and_offset()
    if _attr(op) == ATTR_W:
        x = ir.MemRefType(images.type)
        xs, _ = x.get_strides_and_offset()
        shape = x.shape
        if _swapped(op):
            xs, shape = _swap01(xs), _swap01(shape)
        return (strides[2] == y.shape[3] and strides[1] == y.shape[2] * y.shape[3]
                and xs[2] >= shape[3] and xs[1] >= shape[2] * xs[2])
    return strides[2] == y.shape[3]


def _replace(op, name: str, elt: str, threads: int = 1) -> None:
    from .rlx_parallel_loops import PIPELINE_HOT_MIN_WORK
    from .rlx_pool_kernels import _parallel_calls
    w, xp, shapes, y = op.operands
    zero = _zero_start(op_view(op)) or (DROP_ZERO_FILL and _drop_zero_fill(op))
    geom = list(ir.DenseI64ArrayAttr(op.attributes[_attr(op)]))
    columns = _attr(op) == ATTR_W
    t2 = ir.Type.parse(_matrix_type(elt))
    t4 = ir.Type.parse(conv_memref_type(elt))
    i1 = ir.IntegerType.get_signless(1)
    i64 = ir.IntegerType.get_signless(64)
    o, kk = ir.MemRefType(w.type).shape
    xp = _images_view(op, xp)
    n = ir.MemRefType(xp.type).shape[0]
    oh, ow = ir.MemRefType(y.type).shape[2:]
    with ir.InsertionPoint(op), op.location:
        casts = [ir.Operation.create("memref.cast", results=[t], operands=[v]).results[0]
                 for v, t in ((w, t2), (xp, t4), (y, t4))]
        flag = ir.Operation.create("arith.constant", results=[i1], attributes={
            "value": ir.IntegerAttr.get(i1, int(zero))}).results[0]
        scalars = [flag] + [_const(g) for g in geom]
        work = max(1, n * o * oh * ow * kk // 8)
        # (the convw kernel: ranges of its columns, (n, oy, ox))
        count = n * oh * ow if columns else n
        blocks = min(threads, count) if threads > 1 and work >= PIPELINE_HOT_MIN_WORK else 1
        if blocks == 1:
            cols = [_const(0), _const(count)] if columns else []
            ir.Operation.create("func.call", operands=casts + scalars + cols, attributes={
                "callee": ir.FlatSymbolRefAttr.get(name),
                "gradir.work": ir.IntegerAttr.get(i64, work)})
        elif columns:
            _parallel_columns(name, casts, blocks, count, work, scalars)
        else:
            _parallel_calls(name, casts[1:], blocks, n, work, shared=casts[:1], scalars=scalars)
    op.erase()
    _drop_if_unused(shapes)


def _drop_zero_fill(op) -> bool:
    """Erases the +0.0 fill of the output just before ``op`` (only
    allocations and constants between): the kernel then writes every
    element of the output without reading it (the same bits: its sums
    start from +0.0 either way).  ``_zero_start`` leaves it when the output
    is yielded out of rlx-to-linalg's scf.execute_region around the generic
    (used past it) or allocated outside it: every conv kernel call of the
    CPU pipeline had its output filled with zeros and read."""
    from .rlx_matmul_kernels import _zero_fill_of
    from .rlx_pool_kernels import _just_before
    y = op.operands[3]
    fill = _just_before(op, ("memref.alloc", "arith.constant"))
    if fill is None or not _zero_fill_of(fill, y, 1):
        return False
    fill.erase()
    return True


class op_view:
    """``op`` as ``_zero_start`` reads a contraction: operand 2 its output."""

    def __init__(self, op):
        self.op = op
        self.operation = op.operation
        self.operands = [op.operands[0], op.operands[1], op.operands[3]]


def _drop_if_unused(value) -> None:
    owner = _compat.defining_op(value)
    if owner is None or owner.name != "memref.alloc":
        return
    users = _compat.uses_of(value)
    if any(u.name != "memref.dealloc" for u, _ in users):
        return
    for u, _ in users:
        u.erase()
    owner.erase()


def _parallel_columns(name, casts, blocks, count, work, scalars) -> None:
    """``scf.parallel`` over ``blocks`` ranges of the ``count`` columns (n,
    oy, ox) of the convw kernel (a multiple of 16 long where over 16, the
    last shorter), each calling it on the whole operands for its range (a
    thread packs the panels of its columns only)."""
    from mlir.dialects import arith
    size = -(-count // blocks)
    if size > 16:
        size = -(-size // 16) * 16
    blocks = -(-count // size)
    loop = ir.Operation.create("scf.parallel", operands=[_const(0), _const(blocks), _const(1)],
                               regions=1, attributes={
                                   "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 1, 1, 0])})
    body = loop.regions[0].blocks.append(ir.IndexType.get())
    i64 = ir.IntegerType.get_signless(64)
    with ir.InsertionPoint(body):
        start = arith.muli(body.arguments[0], _const(size))
        end = arith.minsi(arith.addi(start, _const(size)), _const(count))
        ir.Operation.create("func.call", operands=list(casts) + list(scalars) + [start, end],
                            attributes={"callee": ir.FlatSymbolRefAttr.get(name),
                                        "gradir.work": ir.IntegerAttr.get(
                                            i64, max(1, work // blocks))})
        ir.Operation.create("scf.reduce", operands=[], regions=0)
