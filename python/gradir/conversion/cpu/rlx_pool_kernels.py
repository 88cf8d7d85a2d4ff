"""rlx-pool-kernels: marked 2x2 pools on buffers become calls of gradir's pooling kernels."""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from ... import _compat
from ...passes.base import ModulePass, option
from .pool_kernels import (POOL_ELEMENT_TYPES, avg_pool_backward_name, index_memref_type,
                           indices_name, max_pool_backward_name, max_pool3x3_backward_name,
                           max_pool3x3_name, max_pool_name, pool_memref_type, pool_type)
from .pool_index_kernels import saved_index_memref_type, saved_indices_name
from .rlx_matmul_kernels import _const, _declare, kernel_target

# The marked ops: forward pools (named ops) -> kernel name; backward
# generics (kernel attribute) -> (kernel name, how many times they read
# the input).
_FORWARD = {"linalg.pooling_nchw_max": max_pool_name}
# forward pools' kernels by window (rows, columns), all of stride 2
_FORWARD_WINDOWS = {(2, 2): max_pool_name, (3, 3): max_pool3x3_name}
_BACKWARD = {"max_pool2x2_backward": (max_pool_backward_name, 4),
             "avg_pool2x2_backward": (avg_pool_backward_name, 0),
             "max_pool3x3s2_backward": (max_pool3x3_backward_name, 36)}
# the 3x3 backward's generic (nn._kernel_max_pool3_backward): the padded
# gradient through 4 maps, the padded input through 36, the input gradient
_POOL3_OPERANDS = 41
# a forward and a backward of one input (``_pairs``): their kernels by window
# (``indices_name``: the forward saving the indices, the backward reading them)
_PAIRED = {(2, 2): "max_pool2x2", (3, 3): "max_pool3x3s2"}
# rlx.max_pool2d_with_indices / max_pool2d_indices_backward's generics
# (linalg/pool_indices.py) -> (kernel, backward, window maps per operand)
_SAVED = {"max_pool2x2_indices": ("max_pool2x2", False, 4),
          "max_pool3x3s2_indices": ("max_pool3x3s2", False, 9),
          "max_pool2x2_backward_indices": ("max_pool2x2_backward", True, 1),
          "max_pool3x3s2_backward_indices": ("max_pool3x3s2_backward", True, 4)}


@dataclass(frozen=True)
class RlxPoolKernels(ModulePass):
    """Turns marked 2x2 pools on buffers into calls of gradir's pooling kernels.

    The 2x2 pools of stride 2 that ``rlx-to-linalg{pool-kernels=true}``
    emits become, once bufferized, calls of gradir's pooling kernels
    (``conversion/cpu/pool_kernels.py``, in the kernel library the runtime
    links, ``runtime/kernels.py``).  Run after bufferization, before
    ``convert-linalg-to-loops``.

    The forward pool, ``linalg.pooling_nchw_max {gradir.kernel}`` with a
    2x2 window and stride 2, becomes a call writing its output (the -inf
    fill just before it is left out, and so is the unread window buffer):

        linalg.fill ins(%ninf : f32) outs(%y : memref<64x6x12x12xf32>)
        linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, gradir.kernel,
            strides = dense<2> : tensor<2xi64>}
            ins(%x, %w : memref<64x6x24x24xf32>, memref<2x2xf32>) outs(%y : ...)
    becomes
        %0 = memref.cast %x : memref<64x6x24x24xf32> to memref<?x?x?x?xf32, strided<[?, ?, ?, 1], offset: ?>>
        %1 = memref.cast %y : ...
        call @gradir_kernel_<variant>_max_pool2x2_f32(%0, %1) : (...) -> ()

    The backward, ``linalg.generic {gradir.kernel = "max_pool2x2_backward"}``
    (the output gradient, read through a ``linalg.copy``, then the input
    four times; see ``nn._kernel_backward``), becomes a call of
    ``..._max_pool2x2_backward_<elt>(g, x, dx)`` reading the copy's source
    (the copy is left out); ``"avg_pool2x2_backward"`` (the gradient only)
    a call of ``..._avg_pool2x2_backward_<elt>(g, dx)``.  A 3x3 forward pool
    of stride 2 (on the input padded by one, ``nn._kernel_pool3``) becomes a
    call of ``..._max_pool3x3s2_<elt>``, and its backward's generic
    (``"max_pool3x3s2_backward"``: the padded gradient 4 times, the padded
    input 36 times) one of ``..._max_pool3x3s2_backward_<elt>(g, xp, dx)``.

    A max pool's forward and backward on one input buffer, with the same
    window and output (``_pairs``: what a gradient program holds, the
    backward in the ``scf.execute_region`` the lowering puts it in), pair
    up when nothing between them may write the input: the forward calls
    ``..._<pool>_indices_<elt>(x, y, idx)``, saving each window's
    first-maximum position in an i8 buffer allocated just before it, and
    the backward ``..._<pool>_backward_indices_<elt>(g, idx, dx)``, which
    reads them instead of the input and frees the buffer (the same bits:
    ``pool_kernels.py``).  The input is then read by the forward only (the
    3x3's padded copy is freed after it).  A forward and a backward in two
    functions (``rlx-gradient{split=true}``'s ``_fwd`` and ``_bwd``, the
    parts ``runtime/partition.py`` cuts a large function into: bench/cnn.py's
    ResNet step, whose stem pool's forward is in the first part and its
    backward in the second), a backward in a loop or before the forward stay
    unpaired:

        %i = memref.alloc() {alignment = 64 : i64} : memref<2x3x4x3xi8>
        call @gradir_kernel_<variant>_max_pool2x2_indices_f32(%x, %y, %i)
        ...
        func.call @gradir_kernel_<variant>_max_pool2x2_backward_indices_f32(%g, %i, %dx)
        memref.dealloc %i : memref<2x3x4x3xi8>

    The generics of ``rlx.max_pool2d_with_indices`` and
    ``rlx.max_pool2d_indices_backward`` (``linalg/pool_indices.py``: the
    positions an i32 buffer of the pooled shape, an rlx value that a cut of
    the function passes between its parts) become calls of the saved-index
    kernels (``pool_index_kernels.py``): ``{gradir.kernel =
    "max_pool2x2_indices"}`` (``"max_pool3x3s2_indices"``) of ``..._<pool>
    _indices32_<elt>(x, y, idx)``, ``"max_pool2x2_backward_indices"``
    (``"max_pool3x3s2_backward_indices"``) of ``..._<pool>_backward_indices32
    _<elt>(g, idx, dx)`` reading the gradient copy's source.

    With ``threads`` > 1 a pool of enough work runs as an ``scf.parallel``
    over blocks of images, one kernel call each on views
    (``rlx-parallel-loops`` then runs it on the threads when it is worth
    them); the calls are marked with their work (``gradir.work``).  Each
    image is computed alone, so the results do not depend on the threads.

    Refused (an error at the op): a marked op of another form (hand-written
    IR: window, strides, shapes, element type other than f32/f64, tensors).
    A marked op whose buffers have a non-unit innermost stride or dynamic
    sizes (a view of a strided slice), and a marked backward whose output
    gradient was a constant folded into its body, are left to their loops."""

    name = "rlx-pool-kernels"

    cpu: str = option("host", "the CPU whose kernel library the calls go to (host or a name "
                              "of gradir.conversion.cpu.host.NAMED_TARGETS): the kernels' "
                              "symbols name their variant")
    threads: int = option(1, "threads the code runs on: a pool of enough work (the pipeline's "
                             "hot-min-work) runs as that many blocks of images in an "
                             "scf.parallel, one kernel call each")

    def check_options(self):
        if self.threads < 1:
            raise self.bad_option("threads", "be at least 1", self.threads)

    def apply(self, module: ir.Operation) -> None:
        from .kernels import variant
        target = kernel_target(self, module)
        module = module.operation
        ops = _compat.collect_ops(module, lambda o: "gradir.kernel" in o.attributes and (
            o.name in _FORWARD or (
                o.name == "linalg.generic"
                and isinstance(o.attributes["gradir.kernel"], ir.StringAttr))))
        if not ops:
            return
        var = variant(target)
        needed = set()
        kernel_ops = []
        for op in ops:
            backward = op.name == "linalg.generic"
            if backward and _kind(op) in _SAVED:
                if _SAVED[_kind(op)][1] and len(op.operands) < 2 * _SAVED[_kind(op)][2] + 1:
                    continue        # a constant gradient folded into it: its loops compute it
                problem = _saved_problem(op)
                if problem:
                    self.error(op, problem)
                    raise self.failure()
                if _kernel_layout(op):
                    needed.add(_saved_call(op, var, self.threads))
                continue
            if backward and _gradient_folded(op):
                continue
            problem = _backward_problem(op) if backward else _forward_problem(op)
            if problem:
                self.error(op, problem)
                raise self.failure()
            if _kernel_layout(op):
                kernel_ops.append(op)
        pairs = _pairs(module, kernel_ops)
        indices = {}                        # a paired forward's key -> its index buffer
        for op in kernel_ops:
            backward = op.name == "linalg.generic"
            key = _compat.op_key(op)
            elt = str(ir.MemRefType(op.operands[-1].type).element_type)
            free = None                     # the index buffer the backward frees
            if backward and key in pairs:
                name = indices_name(_PAIRED[pairs[key][1]] + "_backward", elt, var)
                g = op.operands[0] if _kind(op) == "max_pool3x3s2_backward" else \
                    _copy_source(op, op.operands[0])
                free = indices[pairs[key][0]]
                args = [g, free, op.operands[-1]]
                unread = op.operands[0]     # the 2x2's copy buffer, when the copy is gone
            elif backward and _BACKWARD[_kind(op)][1] == 36:
                name = _BACKWARD[_kind(op)][0](elt, var)
                args = [op.operands[0], op.operands[4], op.operands[-1]]
                unread = op.operands[0]     # (read by the call)
            elif backward:
                naming, reads = _BACKWARD[_kind(op)]
                name = naming(elt, var)
                g = _copy_source(op, op.operands[0])
                args = [g] + ([op.operands[1]] if reads else []) + [op.operands[-1]]
                unread = op.operands[0]     # the copy's buffer, when the copy is gone
            else:
                window = tuple(_memref(op.operands[1]).shape)
                name = _FORWARD_WINDOWS[window](elt, var)
                _drop_fill(op)
                args = [op.operands[0], op.operands[2]]
                if key in pairs:
                    name = indices_name(_PAIRED[window], elt, var)
                    indices[key] = _index_buffer(op, window)
                    args.append(indices[key])
                unread = op.operands[1]     # the window
            _replace(op, name, args, elt, self.threads, backward, free)
            _drop_if_unused(unread)
            needed.add((name, _indices_type(elt, backward) if key in pairs
                        else pool_type(elt, len(args))))
        _declare(module, sorted(needed))


def _gradient_folded(op) -> bool:
    """A marked backward whose output gradient was a constant splat (the
    gradient of a plain sum of the pool's output): canonicalization folded
    the copy of the constant and the constant into the body, so the op reads
    only the input and writes the input gradient.  It keeps its loops, which
    compute it correctly; the kernels read a gradient buffer."""
    kind = op.attributes["gradir.kernel"]
    if ir.StringAttr(kind).value not in _BACKWARD:
        return False
    reads = _BACKWARD[ir.StringAttr(kind).value][1]
    if reads == 36:
        return len(op.operands) != _POOL3_OPERANDS
    if len(op.operands) != 1 + reads:
        return False
    return all(op.operands[i] == op.operands[0] for i in range(reads))


def _memref(value) -> ir.MemRefType | None:
    return ir.MemRefType(value.type) if isinstance(value.type, ir.MemRefType) else None


def _unit_inner_stride(t: ir.MemRefType) -> bool:
    try:
        strides, _ = t.get_strides_and_offset()
    except (ValueError, ir.MLIRError):
        return False
    return strides[-1] == 1


def _operand_problem(values, what: str) -> str | None:
    types = [_memref(v) for v in values]
    if any(t is None or t.rank != 4 for t in types):
        return f"{what} must read and write 4-D memrefs (NCHW)"
    elts = {str(t.element_type) for t in types}
    if len(elts) != 1 or next(iter(elts)) not in POOL_ELEMENT_TYPES:
        return f"{what} must have one element type, one of " + ", ".join(POOL_ELEMENT_TYPES)
    return None


def _kernel_layout(op) -> bool:
    """Whether the kernels can read and write ``op``'s buffers as they are:
    static shapes and a unit innermost stride (bufferization gives a view
    of a strided slice other strides: such a pool keeps its loops)."""
    types = [_memref(v) for v in op.operands]
    return all(t is not None and (t.rank != 4 or (t.has_static_shape and _unit_inner_stride(t)))
               for t in types)


def _dense_pair(op, name: str) -> list[int] | None:
    if name not in op.attributes:
        return [1, 1]
    attr = op.attributes[name]
    try:
        return [int(v) for v in ir.DenseIntElementsAttr(attr)]
    except (TypeError, ValueError):
        return None


def _forward_problem(op) -> str | None:
    what = "a gradir.kernel max pool"
    if len(op.operands) != 3 or op.results:
        return f"{what} must have an input, a window and an output, on buffers"
    x, window, y = op.operands
    problem = _operand_problem([x, y], what)
    if problem:
        return problem
    wt = _memref(window)
    if wt is None or tuple(wt.shape) not in _FORWARD_WINDOWS:
        return f"{what} must have a 2x2 or 3x3 window"
    if _dense_pair(op, "strides") != [2, 2] or _dense_pair(op, "dilations") != [1, 1]:
        return f"{what} must have strides 2 and no dilation"
    xs, ys = _memref(x).shape, _memref(y).shape
    if list(wt.shape) == [3, 3]:
        # the 3x3 kernel reads two columns past each step's last window
        # start, so the padded input has the columns of 2 * Wo + 2
        if (list(xs[:2]) != list(ys[:2]) or not 2 * ys[2] + 1 <= xs[2] <= 2 * ys[2] + 2
                or xs[3] != 2 * ys[3] + 2):
            return (f"{what} must pool {xs} into its 3x3 windows of stride 2, with "
                    f"2 * Wo + 2 columns ({ys} is not that shape)")
        return None
    if (list(xs[:2]) != list(ys[:2])
            or not all(2 * o <= i <= 2 * o + 1 for i, o in zip(xs[2:], ys[2:]))):
        return f"{what} must pool {xs} into its 2x2 windows ({ys} is not that shape)"
    return None


def _backward_problem(op) -> str | None:
    kind = ir.StringAttr(op.attributes["gradir.kernel"]).value
    if kind not in _BACKWARD:
        return (f"unknown gradir.kernel {op.attributes['gradir.kernel']} (expected one of "
                + ", ".join(f'"{k}"' for k in _BACKWARD) + ")")
    reads = _BACKWARD[kind][1]
    if reads == 36:
        return _pool3_backward_problem(op)
    what = f"a gradir.kernel {'max' if reads else 'average'}-pool backward"
    if len(op.operands) != 2 + reads or op.results:
        return (f"{what} must read the gradient{' and the input four times' if reads else ''}, "
                "and write one buffer")
    g, dx = op.operands[0], op.operands[-1]
    if reads and any(op.operands[i] != op.operands[1] for i in range(2, 1 + reads)):
        return f"{what} must read the same input four times"
    problem = _operand_problem([g] + list(op.operands[1:2 if reads else 1]) + [dx], what)
    if problem:
        return problem
    gs, ds = _memref(g).shape, _memref(dx).shape
    if reads and list(_memref(op.operands[1]).shape) != list(ds):
        return f"{what} must read an input of its output's shape"
    if list(gs[:2]) != list(ds[:2]) or [2 * o for o in gs[2:]] != list(ds[2:]):
        return f"{what} must have an output twice the gradient's size ({ds} for {gs})"
    maps = [str(ir.AffineMapAttr(a).value) for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    want = ["(d0, d1, d2 floordiv 2, d3 floordiv 2)"] + [
        f"(d0, d1, (d2 floordiv 2) * 2{' + 1' if a else ''}, (d3 floordiv 2) * 2"
        f"{' + 1' if b else ''})" for a in range(2) for b in range(2)][:reads] + [
        "(d0, d1, d2, d3)"]
    if [m.split("->")[-1].strip() for m in maps] != want:
        return f"{what} must read each window through its indexing maps ({', '.join(want)})"
    return None


def _kind(op) -> str:
    return ir.StringAttr(op.attributes["gradir.kernel"]).value


def _pool3_backward_problem(op) -> str | None:
    """The 3x3 backward's generic: the padded gradient (Ho + 1, Wo + 1) four
    times, the padded input (at least 2 * Ho + 2 rows, 2 * Wo + 2 columns)
    36 times, the input gradient (2 * Ho, 2 * Wo)."""
    what = "a gradir.kernel 3x3 max-pool backward"
    ops = list(op.operands)
    if len(ops) != _POOL3_OPERANDS or op.results:
        return f"{what} must read the gradient 4 times and the input 36, and write one buffer"
    if any(v != ops[0] for v in ops[1:4]) or any(v != ops[4] for v in ops[5:40]):
        return f"{what} must read one gradient and one input"
    problem = _operand_problem([ops[0], ops[4], ops[-1]], what)
    if problem:
        return problem
    gs, xs, ds = (_memref(v).shape for v in (ops[0], ops[4], ops[-1]))
    ho, wo = ds[2] // 2, ds[3] // 2
    if (ds[2] % 2 or ds[3] % 2 or list(gs) != [ds[0], ds[1], ho + 1, wo + 1]
            or list(xs[:2]) != list(ds[:2]) or xs[2] < 2 * ho + 2 or xs[3] < 2 * wo + 2):
        return (f"{what} must have an even output, a gradient of its windows plus one and "
                f"an input padded by one ({ds}, {gs}, {xs})")
    return None


# ops whose memref results alias their memref operand (views)
_VIEWS = ("memref.cast", "memref.subview", "memref.reinterpret_cast", "memref.collapse_shape",
          "memref.expand_shape", "memref.view", "memref.transpose",
          "memref.extract_strided_metadata")
# ops that only read a buffer operand (or its shape): anything else may write it
_READERS = ("memref.dim", "memref.load", "vector.load", "vector.transfer_read",
            "vector.maskedload", "memref.prefetch")


def _pool_input(op):
    """The input buffer a kernel op reads: a forward's ``x``, a 2x2
    backward's ``x``, a 3x3 backward's padded ``xp``."""
    if op.name != "linalg.generic":
        return op.operands[0]
    return op.operands[4] if _kind(op) == "max_pool3x3s2_backward" else op.operands[1]


def _geometry(op):
    """A max pool's window and its (N, C, Ho, Wo); None for an average pool's backward."""
    if op.name != "linalg.generic":
        return tuple(_memref(op.operands[1]).shape), list(_memref(op.operands[2]).shape)
    kind = _kind(op)
    gs = list(_memref(op.operands[0]).shape)
    if kind == "max_pool2x2_backward":
        return (2, 2), gs
    if kind == "max_pool3x3s2_backward":
        return (3, 3), gs[:2] + [gs[2] - 1, gs[3] - 1]   # (the gradient padded by one)
    return None


def _pairs(module, ops) -> dict:
    """The max-pool backwards that can read their forward's indices: a
    backward, its forward the nearest one before it with the same window
    and output shape on the same input buffer, in the block holding the
    backward or one holding the ``scf.execute_region`` around it (the
    lowering's form: the forward runs once before the backward), and no op
    between them that may write the input (an op using the buffer or a view
    of it other than a view, a read or a linalg op reading it as an input).
    Each forward pairs with one backward.  Keys: the op's ``op_key``;
    values: the other op's key and the window."""
    backwards = [op for op in ops if op.name == "linalg.generic" and _geometry(op)]
    forwards = [op for op in ops if op.name != "linalg.generic"]
    if not backwards or not forwards:
        return {}
    order = {_compat.op_key(o): n for n, o in enumerate(
        _compat.collect_ops(module, lambda o: True))}
    pairs = {}
    for bwd in backwards:
        found = [f for f in forwards if _compat.op_key(f) not in pairs
                 and f.operands[0] == _pool_input(bwd) and _geometry(f) == _geometry(bwd)
                 and order[_compat.op_key(f)] < order[_compat.op_key(bwd)]]
        if not found:
            continue
        fwd = max(found, key=lambda f: order[_compat.op_key(f)])
        if not _runs_after(fwd, bwd) or _written_between(fwd, bwd, order):
            continue
        window = _geometry(fwd)[0]
        pairs[_compat.op_key(fwd)] = (_compat.op_key(bwd), window)
        pairs[_compat.op_key(bwd)] = (_compat.op_key(fwd), window)
    return pairs


def _runs_after(fwd, bwd) -> bool:
    """Whether ``bwd`` is in ``fwd``'s block, or in ``scf.execute_region``s
    in it (each runs once)."""
    block = fwd.operation.block
    op = bwd.operation
    while op.block != block:
        op = _compat.parent_op(op)
        if op is None or op.name != "scf.execute_region":
            return False
    return True


def _written_between(fwd, bwd, order) -> bool:
    """Whether an op between ``fwd`` and ``bwd`` (walk order) may write the
    buffer they read, through any view of it; also (unknown) when the
    buffer is neither an argument nor an allocation (a global's, which
    another function may write)."""
    root = _pool_input(fwd)
    while (owner := _compat.defining_op(root)) is not None and owner.name in _VIEWS:
        root = owner.operands[0]
    if owner is not None and owner.name not in ("memref.alloc", "memref.alloca"):
        return True
    start, end = order[_compat.op_key(fwd)], order[_compat.op_key(bwd)]
    seen, values = set(), [root]
    while values:
        v = values.pop()
        for user, n in _compat.uses_of(v):
            if user.name in _VIEWS:
                if _compat.op_key(user) not in seen:
                    seen.add(_compat.op_key(user))
                    values += [r for r in user.results if isinstance(r.type, ir.MemRefType)]
                continue
            if not start < order.get(_compat.op_key(user), -1) < end:
                continue
            if user.name in _READERS or (user.name == "memref.copy" and n == 0):
                continue
            if (user.name.startswith("linalg.") and "operandSegmentSizes" in user.attributes
                    and n < ir.DenseI32ArrayAttr(user.attributes["operandSegmentSizes"])[0]):
                continue
            return True
    return False


def _index_buffer(op, window):
    """The forward's index buffer, allocated just before it: one i8 a window
    (N, C, Ho, Wo), for the 3x3 pool a row and a column more (the windows
    past the last, which the backward reads as the padded gradient's)."""
    n, c, ho, wo = _memref(op.operands[2]).shape
    shape = [n, c, ho, wo] if window == (2, 2) else [n, c, ho + 1, wo + 1]
    with ir.InsertionPoint(op), op.location:
        alloc = ir.Operation.create(
            "memref.alloc", results=[ir.MemRefType.get(shape, ir.IntegerType.get_signless(8))],
            operands=[], attributes={
                "alignment": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 64),
                "operandSegmentSizes": ir.DenseI32ArrayAttr.get([0, 0])})
    return alloc.results[0]


def _indices_type(elt: str, backward: bool) -> str:
    """The type of a kernel saving (forward: x, y, idx) or reading (backward:
    g, idx, dx) the indices."""
    t, i = pool_memref_type(elt), index_memref_type()
    return f"({t}, {i}, {t}) -> ()" if backward else f"({t}, {t}, {i}) -> ()"


def _saved_problem(op) -> str | None:
    """A saved-indices generic (``_SAVED``): a forward reads the (padded)
    input through its window maps and writes the output and the i32
    positions; a backward reads the gradient and the positions through as
    many maps each and writes the input gradient, all 4-D."""
    kernel, backward, reads = _SAVED[_kind(op)]
    what = f"a gradir.kernel {_kind(op)}"
    ops = list(op.operands)
    want = 2 * reads + 1 if backward else reads + 2
    if len(ops) != want or op.results:
        return f"{what} must have {want} buffer operands"
    groups = [ops[:reads], ops[reads:2 * reads]] if backward else [ops[:reads]]
    if any(v != g[0] for g in groups for v in g):
        return f"{what} must read one {'gradient and one index buffer' if backward else 'input'}"
    floats = [ops[0], ops[-1]] if backward else [ops[0], ops[reads]]
    idx = _memref(ops[reads] if backward else ops[-1])
    problem = _operand_problem(floats, what)
    if problem:
        return problem
    if idx is None or idx.rank != 4 or str(idx.element_type) != "i32":
        return f"{what} must read or write its positions as a 4-D i32 memref"
    pooled = _memref(ops[0] if backward else ops[reads]).shape
    if list(idx.shape) != list(pooled):
        return f"{what} must have positions of the pooled shape ({list(idx.shape)}, {pooled})"
    return None


def _saved_call(op, var: str, threads: int) -> tuple[str, str]:
    """Replaces a saved-indices generic by its kernel's call; (name, type)."""
    kernel, backward, reads = _SAVED[_kind(op)]
    ops = list(op.operands)
    elt = str(_memref(ops[-1] if backward else ops[reads]).element_type)
    name = saved_indices_name(kernel, elt, var)
    t, i = pool_memref_type(elt), saved_index_memref_type()
    if backward:
        unread = ops[0]             # the copy's buffer, when the copy is gone
        _replace(op, name, [_copy_source(op, ops[0]), ops[reads], ops[-1]], elt, threads, True)
        _drop_if_unused(unread)
        return name, f"({t}, {i}, {t}) -> ()"
    _replace(op, name, [ops[0], ops[reads], ops[-1]], elt, threads, False)
    return name, f"({t}, {t}, {i}) -> ()"


def _just_before(op, skipped: tuple[str, ...]):
    """The op before ``op`` in its block, past ops named in ``skipped``
    (allocations, constants: they touch no buffer's contents); None at the
    block's start."""
    block_ops = list(_compat.block_ops(op.operation.block))
    keys = [_compat.op_key(o) for o in block_ops]
    for o in reversed(block_ops[:keys.index(_compat.op_key(op.operation))]):
        if o.name not in skipped:
            return o
    return None


def _copy_source(op, g):
    """The buffer a ``linalg.copy`` (or ``memref.copy``) just before ``op``
    (only allocations between them) copied into ``g``, when ``g`` is an
    allocation nothing else reads: the copy and the deallocations of ``g``
    are erased (``g`` itself once the call replaced ``op``).  Else ``g``."""
    owner = _compat.defining_op(g)
    if owner is None or owner.name != "memref.alloc":
        return g
    copy = _just_before(op, ("memref.alloc",))
    if copy is None or copy.name not in ("linalg.copy", "memref.copy") or copy.operands[1] != g:
        return g
    keep = (_compat.op_key(copy), _compat.op_key(op.operation))
    if any(u.name != "memref.dealloc" and _compat.op_key(u) not in keep
           for u, _ in _compat.uses_of(g)):
        return g
    source = copy.operands[0]
    copy.erase()
    for u, _ in _compat.uses_of(g):
        if u.name == "memref.dealloc":
            u.erase()
    return source


def _drop_fill(op) -> None:
    """Erases the ``linalg.fill`` of the pool's output just before it (only
    allocations and constants between them): the kernel writes every
    element without reading it."""
    fill = _just_before(op, ("memref.alloc", "arith.constant"))
    if fill is not None and fill.name == "linalg.fill" and fill.operands[1] == op.operands[2]:
        fill.erase()


def _drop_if_unused(value) -> None:
    """Erases an allocation only deallocations use, if any (the pool's
    window, the dropped copy's buffer)."""
    owner = _compat.defining_op(value)
    if owner is None or owner.name != "memref.alloc":
        return
    users = _compat.uses_of(value)
    if any(u.name != "memref.dealloc" for u, _ in users):
        return
    for u, _ in users:
        u.erase()
    owner.erase()


def work_of(x_shape, backward: bool) -> int:
    """A pool's work as rlx-parallel-loops counts it (vector operations over
    8 elements): per input element about four forward (loads, the maxima,
    the shuffles) and eight backward (the first-maximum chain, the picks,
    the interleaving stores), over 8."""
    n = 1
    for d in x_shape:
        n *= d
    return max(1, n * (8 if backward else 4) // 8)


def _replace(op, name: str, args: list, elt: str, threads: int, backward: bool,
             free=None) -> None:
    """Replaces ``op`` by a call of ``name`` on ``args`` (4-D buffers), or
    with ``threads`` > 1 and enough work by an ``scf.parallel`` over blocks
    of images calling it on views; then deallocates ``free``, if any."""
    from .rlx_parallel_loops import PIPELINE_HOT_MIN_WORK
    generic = ir.Type.parse(pool_memref_type(elt))
    indices = ir.Type.parse(index_memref_type())
    saved = ir.Type.parse(saved_index_memref_type())
    x_shape = _memref(args[-1] if backward else args[0]).shape
    work = work_of(x_shape, backward)
    images = x_shape[0]
    blocks = min(threads, images) if threads > 1 and work >= PIPELINE_HOT_MIN_WORK else 1
    i64 = ir.IntegerType.get_signless(64)
    with ir.InsertionPoint(op), op.location:
        types = {"i8": indices, "i32": saved}
        casts = [ir.Operation.create("memref.cast", results=[
            types.get(str(_memref(v).element_type), generic)], operands=[v]).results[0]
            for v in args]
        if blocks == 1:
            ir.Operation.create("func.call", operands=casts, attributes={
                "callee": ir.FlatSymbolRefAttr.get(name),
                "gradir.work": ir.IntegerAttr.get(i64, work)})
        else:
            _parallel_calls(name, casts, blocks, images, work)
        if free is not None:
            ir.Operation.create("memref.dealloc", operands=[free])
    op.erase()


def _parallel_calls(name, casts, blocks, images, work, shared=(), scalars=()) -> None:
    """``scf.parallel`` over ``blocks`` blocks of images (the last one
    shorter), each calling the kernel on ``shared`` (whole), views of its
    images in each of ``casts`` (4-D, images first) and ``scalars``
    (rlx-conv-kernels' weights and geometry)."""
    from mlir.dialects import arith, memref
    size = -(-images // blocks)
    c0, c1, cn = _const(0), _const(1), _const(blocks)
    loop = ir.Operation.create("scf.parallel", operands=[c0, cn, c1], regions=1, attributes={
        "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 1, 1, 0])})
    body = loop.regions[0].blocks.append(ir.IndexType.get())
    i64 = ir.IntegerType.get_signless(64)
    with ir.InsertionPoint(body):
        i = body.arguments[0]
        start = arith.muli(i, _const(size))
        left = arith.subi(_const(images), start)
        count = arith.minsi(left, _const(size))
        views = list(shared)
        for v in casts:
            dims = [memref.dim(v, _const(d)) for d in (1, 2, 3)]
            views.append(_subview(v, start, count, dims, v.type))
        ir.Operation.create("func.call", operands=views + list(scalars), attributes={
            "callee": ir.FlatSymbolRefAttr.get(name),
            "gradir.work": ir.IntegerAttr.get(i64, max(1, work // blocks))})
        ir.Operation.create("scf.reduce", operands=[], regions=0)


def _subview(v, start, count, dims, result_type):
    """``memref.subview v[start, 0, 0, 0] [count, dims...] [1, 1, 1, 1]``."""
    dynamic = ir.ShapedType.get_dynamic_size()
    static_offsets = ir.DenseI64ArrayAttr.get([ir.ShapedType.get_dynamic_stride_or_offset(),
                                               0, 0, 0])
    static_sizes = ir.DenseI64ArrayAttr.get([dynamic] * 4)
    static_strides = ir.DenseI64ArrayAttr.get([1, 1, 1, 1])
    op = ir.Operation.create(
        "memref.subview", results=[result_type], operands=[v, start, count, *dims],
        attributes={"static_offsets": static_offsets, "static_sizes": static_sizes,
                    "static_strides": static_strides,
                    "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 1, 4, 0])})
    return op.results[0]
