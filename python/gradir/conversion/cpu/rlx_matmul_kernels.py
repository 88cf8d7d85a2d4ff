"""rlx-matmul-kernels: marked matmuls on buffers become calls of gradir's kernels."""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from ... import _compat
from ...passes.base import ModulePass, option
from ..memref_views import VIEW_OPS, aliases_of, ancestor_in_block
from .kernels import (ELEMENT_TYPES, batch_name, batch_type, kernel_name, memref_type,
                      strips_name, strips_type)


@dataclass(frozen=True)
class RlxMatmulKernels(ModulePass):
    """Turns ``linalg.contract {gradir.kernel}`` ops on buffers (what
    ``rlx-to-linalg{matmul-kernels=true}`` emits for f32/f64 matmuls, 2-D and batched,
    once bufferized) into calls of gradir's shape-generic matmul kernels
    (``conversion/cpu/kernels.py``; the runtime links their library,
    ``runtime/kernels.py``).  A transposed operand (indexing map ``(k, m)``
    or ``(n, k)``) is passed as a ``memref.transpose`` view: the kernel reads
    it in place.  The kernel adds ``A @ B`` into ``C``, as the contraction
    does, or writes ``A @ B`` to ``C`` without reading it when ``C`` was
    just filled with +0.0, directly or by a copy of a buffer holding that
    fill (what bufferization makes of the one zero tensor CSE leaves for
    all the matmuls): the fill or the copy is left out (the same bits: the
    FMA chains start from +0.0 either way), and so is a zero buffer no
    copy reads any more.  Run after bufferization (``one-shot-bufferize``), before
    ``convert-linalg-to-loops``.

    A batched contraction (a 3-D C over (batch, M, N, K) = (d0, d1, d2, d3):
    ``rlx-to-linalg``'s batched matmuls) is a kernel call per batch element in
    an ``scf.for``, on rank-reduced subviews; an operand whose dims its map
    permutes (a head split read in place; C written for a head merge, N
    still its unit-stride dim) is a ``memref.transpose`` view first, a 2-D
    operand the same matrix for every element:

        linalg.contract indexing_maps = [(b, m, n, k) -> (m, b, k), (n, b, k), (b, m, n)]
            {gradir.kernel} ins(%q, %k : memref<128x32x64xf32>, memref<128x32x64xf32>)
            outs(%c : memref<32x128x128xf32>)
    becomes
        %qt = memref.transpose %q (d0, d1, d2) -> (d1, d0, d2) : ... strided<[64, 2048, 1]>>
        %kt = memref.transpose %k (d0, d1, d2) -> (d1, d2, d0) : ... strided<[64, 1, 2048]>>
        scf.for %i = %c0 to %c32 step %c1 {
          %qi = memref.subview %qt[%i, 0, 0] [1, 128, 64] [1, 1, 1] : ... to memref<128x64xf32, ...>
          ...
          func.call @gradir_kernel_<variant>_matmul_f32(%0, %1, %2, %false)
        }

        linalg.contract indexing_maps = [#mk, #nk, #mn] {gradir.kernel}
            ins(%a, %w : memref<64x512xf32>, memref<784x512xf32>)
            outs(%c : memref<64x784xf32>)
    becomes
        %wt = memref.transpose %w (d0, d1) -> (d1, d0) : ... to memref<512x784xf32, strided<[1, 512]>>
        %0 = memref.cast %a : memref<64x512xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
        ...
        %false = arith.constant false
        call @gradir_kernel_<variant>_matmul_f32(%0, %1, %2, %false) : (...) -> ()

    With ``threads`` > 1, a matmul of enough work calls the kernel's
    multi-threaded driver instead (``kernels.strips_text``, in a library of
    its own linked with libomp): strips of whole register tiles of C's
    columns (or rows, when its columns are too few), one kernel call each,
    on the threads in one OpenMP loop.  Its arguments after the kernel's:
    columns (else rows), the strip size and count, the threads, and whether
    the strips always run on the threads (work of ``PIPELINE_MIN_WORK`` or
    more; else only while libomp's workers spin, as rlx-parallel-loops'
    ``hot-min-work`` loops).  The program itself then holds no OpenMP region
    for its matmuls (issue 14, compile time: LLVM outlines and compiles
    each region; the MLP step's parts held 2 and 3, ~+15-20 ms of LLVM each).
    A batched one calls the batched driver (``kernels.batch_name``) with
    3-D views: its OpenMP loop runs the batch elements, each split into
    strips when the batch alone does not share evenly on the threads.

        %true = arith.constant true
        %c128 = arith.constant 128 : index
        %c2 = arith.constant 2 : index
        %c2_i32 = arith.constant 2 : i32
        call @gradir_kernel_<variant>_strips_f32(%0, %1, %2, %false, %true, %c128, %c2,
            %c2_i32, %true) {gradir.work = 2097152 : i64} : (...) -> ()
    """

    name = "rlx-matmul-kernels"

    cpu: str = option("host", "the CPU whose kernel library the calls go to (host or a name "
                              "of gradir.conversion.cpu.host.NAMED_TARGETS): the kernels' "
                              "symbols name their variant")
    threads: int = option(1, "threads the code runs on: a matmul of enough work (the "
                             "pipeline's hot-min-work) calls the kernel's multi-threaded "
                             "driver, which runs it as that many strips of whole register "
                             "tiles (columns, or rows when its columns are too few), one "
                             "kernel call each, on OpenMP threads")

    def check_options(self):
        if self.threads < 1:
            raise self.bad_option("threads", "be at least 1", self.threads)

    def apply(self, module: ir.Operation) -> None:
        from .kernels import variant
        target = kernel_target(self, module)
        var = variant(target)
        from .schedule import schedule_params
        params = schedule_params(target, 1)
        module = module.operation
        ops = _compat.collect_ops(module, lambda o: o.name == "linalg.contract"
                                  and "gradir.kernel" in o.attributes)
        needed = set()
        for op in ops:
            problem = _problem(op)
            if problem:
                self.error(op, problem)
                raise self.failure()
            elt = str(ir.MemRefType(op.operands[2].type).element_type)
            tile = (params.f32_m, params.f32_n) if elt == "f32" else (params.f64_m, params.f64_n)
            if len(_maps(op)[2].results) == 3:
                if _replace_batched(op, kernel_name(elt, var), elt, self.threads, tile,
                                    _zero_start(op), batch_name(elt, var)):
                    needed.add((batch_name(elt, var), batch_type(elt)))
                else:
                    needed.add((kernel_name(elt, var), _kernel_type(elt)))
            elif _replace(op, kernel_name(elt, var), elt, self.threads, tile, _zero_start(op),
                          strips_name(elt, var)):
                needed.add((strips_name(elt, var), strips_type(elt)))
            else:
                needed.add((kernel_name(elt, var), _kernel_type(elt)))
        if needed:
            _declare(module, sorted(needed))


def kernel_target(kernel_pass, module):
    """The ``CpuTarget`` of a kernel pass's ``cpu`` option (rlx-matmul-kernels,
    rlx-pool-kernels), or an error at the module and the pass's failure."""
    from .host import NAMED_TARGETS, resolve
    cpu = kernel_pass.cpu
    if cpu != "host" and cpu not in NAMED_TARGETS:
        kernel_pass.error(module, f"{kernel_pass.name}: unknown cpu '{cpu}' (expected host or "
                                  f"one of: {', '.join(sorted(NAMED_TARGETS))})")
        raise kernel_pass.failure()
    return resolve(cpu)


def _maps(op) -> list[ir.AffineMap]:
    return [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]


def _loop_dims(m: ir.AffineMap) -> list[int] | None:
    """The loop dims a map's results are, or None when one is no dim."""
    try:
        return [ir.AffineDimExpr(e).position for e in m.results]
    except ValueError:
        return None


def _problem(op) -> str | None:
    if len(op.operands) != 3 or op.results:
        return "a gradir.kernel contraction must have two inputs and one output, on buffers"
    types = [t.type for t in op.operands]
    ranks = [ir.MemRefType(t).rank if isinstance(t, ir.MemRefType) else 0 for t in types]
    if ranks != [2, 2, 2] and (ranks[2] != 3 or not {ranks[0], ranks[1]} <= {2, 3}):
        return ("a gradir.kernel contraction must read and write 2-D memrefs, or write a "
                "3-D one from 2-D or 3-D ones (a batched matmul)")
    elts = {str(ir.MemRefType(t).element_type) for t in types}
    if len(elts) != 1 or next(iter(elts)) not in ELEMENT_TYPES:
        return ("a gradir.kernel contraction must have one element type, one of "
                + ", ".join(ELEMENT_TYPES))
    maps = _maps(op)
    if ranks[2] == 3:
        # (batch, M, N, K) = (d0, d1, d2, d3); an operand's dims in any order
        # (read through a transposed view), a 2-D one without the batch
        want = [{1, 3}, {3, 2}]
        for m, rank, dims in zip(maps, ranks, want):
            got = _loop_dims(m)
            if m.n_dims != 4 or got is None or sorted(got) != sorted(
                    dims | ({0} if rank == 3 else set())):
                return ("a gradir.kernel contraction with a 3-D output must be a batched "
                        "matmul: (d0, d1, d2, d3) = (batch, M, N, K), A's dims of (batch, M, "
                        f"K) and B's of (batch, K, N) in any order (indexing map {m})")
        dims_c = _loop_dims(maps[2])
        if dims_c is None or sorted(dims_c) != [0, 1, 2]:
            return ("a gradir.kernel contraction with a 3-D output must write it as "
                    f"(batch, M, N) = (d0, d1, d2) in any order (indexing map {maps[2]})")
        return _unit_columns(types[2], dims_c.index(2), maps[2])
    want = [{"(d0, d2)", "(d2, d0)"}, {"(d2, d1)", "(d1, d2)"}, {"(d0, d1)"}]
    for m, allowed in zip(maps, want):
        if str(m).split("->")[-1].strip() not in allowed:
            return f"a gradir.kernel contraction must be a matmul (indexing map {m})"
    return _unit_columns(types[2], 1, maps[2])


def _unit_columns(t: ir.Type, dim: int, m: ir.AffineMap) -> str | None:
    """The kernels store C's rows as vectors: its N dim (``dim``) must have
    unit stride (a dynamic one is taken to be)."""
    stride = ir.MemRefType(t).get_strides_and_offset()[0][dim]
    if stride not in (1, ir.ShapedType.get_dynamic_stride_or_offset()):
        return ("a gradir.kernel contraction must write its output with unit stride "
                f"along N (indexing map {m}, type {t})")
    return None


def _transposed(value: ir.Value, perm=(1, 0)) -> ir.Value:
    """``memref.transpose``: dim i of the view is dim ``perm[i]`` of ``value``."""
    t = ir.MemRefType(value.type)
    strides, offset = t.get_strides_and_offset()
    out = ir.MemRefType.get([t.shape[p] for p in perm], t.element_type,
                            ir.StridedLayoutAttr.get(offset, [strides[p] for p in perm]),
                            t.memory_space)
    perm = ir.AffineMapAttr.get(ir.AffineMap.get_permutation(list(perm)))
    op = ir.Operation.create("memref.transpose", results=[out], operands=[value],
                             attributes={"permutation": perm})
    return op.results[0]


def _strips(m: int, n: int, k: int, threads: int, tile: tuple[int, int]):
    """How a matmul (m x k times k x n) runs on ``threads`` threads: None
    (one call) or ``(dim, size, count)``: ``count`` strips of ``size``
    columns (dim 1) or rows (dim 0), whole register tiles each."""
    from .rlx_parallel_loops import PIPELINE_HOT_MIN_WORK
    if threads < 2 or min(m, n, k) < 1 or matmul_work(m, n, k) < PIPELINE_HOT_MIN_WORK:
        return None
    return _split(m, n, threads, tile)


def _split(m: int, n: int, threads: int, tile: tuple[int, int]):
    """``(dim, size, count)``: C (m x n) as at least ``threads`` strips of
    whole register tiles (columns, else rows); None when neither has that
    many tiles."""
    mr, nr = tile
    for dim, extent, unit in ((1, n, nr), (0, m, mr)):
        tiles = -(-extent // unit)
        if tiles >= threads:
            size = -(-tiles // threads) * unit
            return dim, size, -(-extent // size)
    return None


def matmul_work(m: int, n: int, k: int) -> int:
    """A matmul's work as rlx-parallel-loops counts it (vector operations
    over 8 elements: m * n * k / 8, what its estimate of the schedule's
    register-tiled loops gives)."""
    return max(1, m * n * k // 8)


def _const(value: int) -> ir.Value:
    return ir.Operation.create("arith.constant", results=[ir.IndexType.get()], attributes={
        "value": ir.IntegerAttr.get(ir.IndexType.get(), value)}).results[0]


def _call(name: str, args: list[ir.Value], work: int) -> None:
    """``func.call @name(args)`` marked with its work for rlx-parallel-loops."""
    ir.Operation.create("func.call", operands=args, attributes={
        "callee": ir.FlatSymbolRefAttr.get(name),
        "gradir.work": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), work)})


def _kernel_type(elt: str) -> str:
    t = memref_type(elt)
    return f"({t}, {t}, {t}, i1) -> ()"


def _replace(op, name: str, elt: str, threads: int = 1, tile: tuple[int, int] = (1, 1),
             zero: bool = False, strips: str = "") -> bool:
    """Replaces ``op`` by a call of kernel ``name``, or of its driver
    ``strips`` when the matmul is worth ``threads`` threads; returns
    whether it calls the driver."""
    from .rlx_parallel_loops import PIPELINE_MIN_WORK
    a, b, c = op.operands
    maps = [str(m).split("->")[-1].strip() for m in _maps(op)]
    generic = ir.Type.parse(memref_type(elt))
    m, n = ir.MemRefType(c.type).shape
    k = ir.MemRefType(a.type).shape[1 if maps[0] == "(d0, d2)" else 0]
    work = matmul_work(m, n, k)
    plan = _strips(m, n, k, threads, tile)
    with ir.InsertionPoint(op), op.location:
        if maps[0] == "(d2, d0)":
            a = _transposed(a)
        if maps[1] == "(d1, d2)":
            b = _transposed(b)
        args = [ir.Operation.create("memref.cast", results=[generic], operands=[v]).results[0]
                for v in (a, b, c)]
        args.append(_bool(zero))
        if plan is None:
            _call(name, args, work)
        else:
            # one strip per thread: C's columns (or rows) in whole register tiles
            dim, size, count = plan
            i32 = ir.IntegerType.get_signless(32)
            threads_value = ir.Operation.create("arith.constant", results=[i32], attributes={
                "value": ir.IntegerAttr.get(i32, threads)}).results[0]
            _call(strips, args + [_bool(dim == 1), _const(size), _const(count), threads_value,
                                  _bool(work >= PIPELINE_MIN_WORK)], work)
    op.erase()
    return plan is not None


# --- batched matmuls: a kernel call per batch element ----------------------------

def _replace_batched(op, name: str, elt: str, threads: int = 1, tile: tuple[int, int] = (1, 1),
                     zero: bool = False, driver: str = "") -> bool:
    """Replaces a batched ``op`` (C (batch, M, N) = A @ B over (d0, d1, d2,
    d3) = (batch, M, N, K)) by one kernel call per batch element, in an
    ``scf.for``, on rank-reduced ``memref.subview``s of A, B and C (an
    operand's dims brought to (batch, M, K) / (batch, K, N) by a
    ``memref.transpose`` view first: a head split read in place; a 2-D
    operand is the same matrix for every element), or, when the matmuls are
    worth ``threads`` threads, by one call of the batched driver
    (``kernels.strips_text``: its OpenMP loop over the batch elements, each
    split into strips when the batch alone does not share evenly; a 2-D
    operand passed as a view of batch stride 0).  Each element of C is
    computed by one kernel call, whatever the threads: the same bits.
    Returns whether it calls the driver."""
    from mlir.dialects import scf
    from .rlx_parallel_loops import PIPELINE_MIN_WORK
    a, b, c = op.operands
    dims_a, dims_b, dims_c = (_loop_dims(x) for x in _maps(op))
    nb, m, n = (ir.MemRefType(c.type).shape[dims_c.index(i)] for i in range(3))
    k = ir.MemRefType(a.type).shape[dims_a.index(3)]
    work = matmul_work(m, n, k)
    plan = _batch_plan(nb, m, n, k, threads, tile)
    with ir.InsertionPoint(op), op.location:
        a, b = _ordered(a, dims_a, (0, 1, 3)), _ordered(b, dims_b, (0, 3, 2))
        c = _ordered(c, dims_c, (0, 1, 2))
        flag = _bool(zero)
        if plan is None:
            generic = ir.Type.parse(memref_type(elt))
            loop = scf.ForOp(_const(0), _const(nb), _const(1))
            with ir.InsertionPoint(loop.body):
                i = loop.induction_variable
                args = [ir.Operation.create("memref.cast", results=[generic], operands=[
                    _element(v, i)]).results[0] for v in (a, b, c)]
                _call(name, args + [flag], work)
                scf.YieldOp([])
        else:
            dim, size, count = plan
            generic = ir.Type.parse(memref_type(elt, 3))
            args = [ir.Operation.create("memref.cast", results=[generic], operands=[
                _with_batch(v, nb)]).results[0] for v in (a, b, c)]
            i32 = ir.IntegerType.get_signless(32)
            threads_value = ir.Operation.create("arith.constant", results=[i32], attributes={
                "value": ir.IntegerAttr.get(i32, threads)}).results[0]
            _call(driver, args + [flag, _bool(dim == 1), _const(size), _const(count),
                                  threads_value, _bool(nb * work >= PIPELINE_MIN_WORK)],
                  nb * work)
    op.erase()
    return plan is not None


def _batch_plan(nb: int, m: int, n: int, k: int, threads: int, tile: tuple[int, int]):
    """How a batched matmul (``nb`` matmuls m x k times k x n) runs on
    ``threads`` threads: None (a kernel call per element, one after the
    other) or ``(dim, size, count)``: each element as ``count`` strips of
    ``size`` columns (dim 1) or rows (dim 0), the ``nb * count`` calls on
    the threads; as many strips per element as make the calls a multiple
    of the threads (one per element when the batch already is)."""
    import math
    from .rlx_parallel_loops import PIPELINE_HOT_MIN_WORK
    if threads < 2 or min(nb, m, n, k) < 1 or nb * matmul_work(m, n, k) < PIPELINE_HOT_MIN_WORK:
        return None
    per = threads // math.gcd(nb, threads)
    return (_split(m, n, per, tile) if per > 1 else None) or (1, n, 1)


def _ordered(value: ir.Value, dims: list[int], want: tuple[int, ...]) -> ir.Value:
    """``value`` (its dims the loop dims ``dims``) as a view whose dims are
    in the order of ``want`` (those it has)."""
    perm = [dims.index(d) for d in want if d in dims]
    return value if perm == sorted(perm) else _transposed(value, perm)


def _element(value: ir.Value, i: ir.Value) -> ir.Value:
    """Batch element ``i`` of a 3-D ``value``: a rank-reduced subview (a 2-D
    ``value`` itself)."""
    t = ir.MemRefType(value.type)
    if t.rank == 2:
        return value
    strides, _ = t.get_strides_and_offset()
    dynamic = ir.ShapedType.get_dynamic_stride_or_offset()
    out = ir.MemRefType.get(t.shape[1:], t.element_type,
                            ir.StridedLayoutAttr.get(dynamic, strides[1:]), t.memory_space)
    return ir.Operation.create("memref.subview", results=[out], operands=[value, i], attributes={
        "static_offsets": ir.DenseI64ArrayAttr.get([dynamic, 0, 0]),
        "static_sizes": ir.DenseI64ArrayAttr.get([1, *t.shape[1:]]),
        "static_strides": ir.DenseI64ArrayAttr.get([1, 1, 1]),
        "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 1, 0, 0])}).results[0]


def _with_batch(value: ir.Value, nb: int) -> ir.Value:
    """A 3-D ``value`` itself; a 2-D one as a (``nb``, rows, cols) view of
    batch stride 0 (every element the same matrix)."""
    t = ir.MemRefType(value.type)
    if t.rank == 3:
        return value
    index = ir.IndexType.get()
    meta = ir.Operation.create("memref.extract_strided_metadata", results=[
        ir.MemRefType.get([], t.element_type, memory_space=t.memory_space)] + [index] * 5,
        operands=[value])
    dynamic = ir.ShapedType.get_dynamic_stride_or_offset()
    out = ir.MemRefType.get([nb, *t.shape], t.element_type, ir.StridedLayoutAttr.get(
        dynamic, [0, dynamic, dynamic]), t.memory_space)
    return ir.Operation.create("memref.reinterpret_cast", results=[out], operands=[
        meta.results[0], meta.results[1], meta.results[4], meta.results[5]], attributes={
        "static_offsets": ir.DenseI64ArrayAttr.get([dynamic]),
        "static_sizes": ir.DenseI64ArrayAttr.get([nb, *t.shape]),
        "static_strides": ir.DenseI64ArrayAttr.get([0, dynamic, dynamic]),
        "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 1, 0, 2])}).results[0]


def _bool(value: bool) -> ir.Value:
    return ir.Operation.create("arith.constant", results=[ir.IntegerType.get_signless(1)],
                               attributes={"value": ir.BoolAttr.get(value)}).results[0]


def _declare(module: ir.Operation, kernels: list[tuple[str, str]]) -> None:
    """Declares the functions ``kernels`` (name, function type) the module
    does not have yet."""
    body = module.regions[0].blocks[0]
    existing = {str(ir.StringAttr(o.attributes["sym_name"]).value)
                for o in _compat.block_ops(body)
                if o.name == "func.func" and "sym_name" in o.attributes}
    with ir.InsertionPoint.at_block_begin(body), ir.Location.unknown():
        for name, ftype in kernels:
            if name in existing:
                continue
            ftype = ir.FunctionType(ir.Type.parse(ftype))
            ir.Operation.create("func.func", regions=1, attributes={
                "sym_name": ir.StringAttr.get(name),
                "function_type": ir.TypeAttr.get(ftype),
                "sym_visibility": ir.StringAttr.get("private")})


# --- C not read: the zero fill before a kernel left out ---------------------------

def _zero_start(op) -> bool:
    """Whether the kernel of ``op`` (a ``linalg.contract`` on buffers) may
    write ``A @ B`` to its output without reading it, and if so removes what
    put zeros there: a ``linalg.fill`` of +0.0 of the output, or a
    ``memref.copy`` into it from a buffer only that fill wrote (then that
    buffer too when nothing reads it any more).  Conservative: the fill or
    copy is in the contraction's block, and nothing between them touches
    the output (or a view of it) but views."""
    c = op.operands[2]
    owner = _compat.defining_op(c)
    if owner is not None and owner.name != "memref.alloc":
        return False    # a view: its buffer may be written through another one
    anchor = op.operation
    while True:
        block = anchor.block
        index = {_compat.op_key(o): i for i, o in enumerate(_compat.block_ops(block))}
        uses = _uses_before(c, block, index, index[_compat.op_key(anchor)])
        if uses is not None:
            break
        # C is used outside this block: a contraction in an
        # scf.execute_region (rlx-to-linalg's shield against reshape
        # fusion, e.g. before an unflatten) whose fill is in the parent
        # block; the region counts as the contraction there when nothing
        # in it before the contraction touches C (a region of one block:
        # with more, another block may run first)
        parent = _compat.parent_op(anchor)
        if (parent is None or parent.name != "scf.execute_region"
                or len(list(parent.regions[0].blocks)) != 1
                or _uses_before(c, block, index, index[_compat.op_key(anchor)], outside=True)):
            return False
        anchor = parent
    if not uses:
        return False
    _, user, operand_number = max(uses, key=lambda u: u[0])     # the last one
    if _zero_fill_of(user, c, operand_number):
        user.erase()
        return True
    if user.name == "memref.copy" and operand_number == 1 and user.operands[1] == c:
        zeros = user.operands[0]
        if not _only_zero_fill(zeros, block, index, index[_compat.op_key(user)]):
            return False
        user.erase()
        _drop_if_unread(zeros)
        return True
    return False


def _uses_before(value, block, index, limit, outside: bool = False):
    """``(position, user, operand number)`` of the uses of ``value`` and of
    its views (the views themselves left out) at positions of ``block``
    before ``limit`` (``index``: the positions of its ops); None when one is
    outside ``block`` (``outside``: those left out)."""
    found = []
    for alias in aliases_of(value):
        for user, operand_number in _compat.uses_of(alias):
            top = ancestor_in_block(user, block)
            if top is None:
                if outside:
                    continue
                return None
            pos = index[_compat.op_key(top)]
            if pos < limit and user.name not in VIEW_OPS:
                found.append((pos, user, operand_number))
    return found


def _zero_fill_of(user, c, operand_number) -> bool:
    """``user`` is a ``linalg.fill`` of +0.0 into ``c`` itself."""
    return (user.name == "linalg.fill" and operand_number == 1 and user.operands[1] == c
            and _positive_zero(user.operands[0]))


def _positive_zero(value) -> bool:
    owner = _compat.defining_op(value)
    if owner is None or owner.name != "arith.constant":
        return False
    try:
        v = ir.FloatAttr(owner.attributes["value"]).value
    except ValueError:
        return False
    import math
    return v == 0.0 and math.copysign(1.0, v) > 0


def _only_zero_fill(zeros, block, index, copy_pos) -> bool:
    """Whether ``zeros`` (an allocation of this block) holds +0.0 at
    position ``copy_pos``: one ``linalg.fill`` of +0.0 wrote it and nothing
    else before then but copies reading it."""
    owner = _compat.defining_op(zeros)
    if owner is None or owner.name != "memref.alloc":
        return False
    uses = _uses_before(zeros, block, index, copy_pos + 1)
    if uses is None:
        return False
    fills = [u for _, u, n in uses if _zero_fill_of(u, zeros, n)]
    reads = [u for _, u, n in uses if u.name == "memref.copy" and n == 0]
    return len(fills) == 1 and len(fills) + len(reads) == len(uses)


def _drop_if_unread(zeros) -> None:
    """Erases the zero buffer (its fill, deallocation and allocation) when
    nothing else uses it."""
    users = _compat.uses_of(zeros)
    if any(u.name not in ("linalg.fill", "memref.dealloc") for u, _ in users):
        return
    owner = _compat.defining_op(zeros)
    for u, _ in users:
        u.erase()
    owner.erase()
