"""rlx-parallel-loops: picks the loops the CPU pipeline runs on several threads."""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, scf

from ..._compat import block_ops, child_ops, collect_ops, parent_op, set_attribute_from
from ...dialects.verify import constant_index
from ...ir import functions, symbol_name
from ...passes.base import ModulePass, option

__all__ = ["RlxParallelLoops", "MIN_WORK", "PIPELINE_MIN_WORK", "PIPELINE_HOT_MIN_WORK",
           "estimated_work", "shared_write"]

# The operation count the kernel passes put on their calls (an i64 attribute).
WORK = "gradir.work"

# Estimated work (see ``estimated_work``) below which a loop nest stays on one
# thread.  A fork/join of LLVM's OpenMP runtime costs a few microseconds when
# its threads are awake and a core is free for each; 2^17 operations (an
# elementwise op over ~32K elements) take ~30 us on one core.  Measured with
# MLP 784-512-512-10 gradient steps (batch 64/256) on a shared 2-core EPYC
# (load ~4): 2^15 lost to one thread there, 2^17 gave 1.6-1.75x at 2 threads
# when the cores were free.
MIN_WORK = 1 << 17

# The CPU pipeline's threshold (rlx-lower-to-llvm, gradir.compile): higher,
# because a whole program pays a fork/join per region.  bench/cpu.py on an
# idle 2-core EPYC (AVX-512, load 1.6), 2 threads against 1 in one process:
# with 2^17, LeNet-5's step (34 regions over short im2col/pool loops) ran
# 0.15x (14.3 ms against 2.1), MLP 64 0.78x; with 2^22, LeNet-5 0.94x,
# MLP 64 0.97x, while GEMM 512^3 still gains 1.53x (1024^3: 1.81x).
PIPELINE_MIN_WORK = 1 << 22

# The CPU pipeline's lower threshold (``hot-min-work``): loops from 2^17 up to
# PIPELINE_MIN_WORK operations run on the threads only while libomp's
# workers are hot (the calling thread's block time, ``kmp_get_blocktime()``,
# is nonzero: gradir's runtime sets it so while the machine is otherwise
# idle, runtime/openmp.py), else on the calling thread alone: the
# region's OpenMP ``if`` clause (libomp runs it serialized, the same
# code; until 2026-11-24 a sequential copy of the loop in an scf.if, which
# made the LeNet-5 step's LLVM IR 5% larger and its 2-thread compile
# 15-25 ms slower for the same run time, hot 1.23 / cold 1.81 ms).  A region costs its fork/join only with spinning
# workers: LeNet-5's step at 2 threads, idle 2-core EPYC (AVX-512), hot /
# cold workers: 2.03 / 2.46 ms with 2^22 alone, 1.79 / 2.88 ms with every
# loop from 2^20 parallel (2^19: 1.79 / 3.10), one thread 2.71 ms.  Since
# the if clause (cold workers run every such region serialized) the
# threshold moves the hot case only: 2026-11-25, Intel Xeon, LeNet-5 step
# at 2 threads, fresh processes, min of 9 x 100 calls, hot (idle machine)
# x86-64-v3 (AVX2) 3.31-3.38 ms at 2^20, 3.31-3.35 at 2^19, 3.03-3.05 at
# 2^18, 2.90-2.92 at 2^17, 2.86 at 2^16; AVX-512 2.28-2.31 at 2^20, 2.16
# at 2^18 and 2^17; cold (KMP_BLOCKTIME=0) 4.79-4.86 / 3.48-3.63 ms at
# 2^20 and 4.71-4.81 / 3.51-3.52 at 2^17; MLP steps the same; the step's
# first call at 2 threads 0.54 -> 0.57-0.61 s (more regions to compile).
PIPELINE_HOT_MIN_WORK = 1 << 17

# How the iterations of a loop are dealt to the threads.  "static" gives each
# thread one fixed contiguous range; "guided" lets a thread that is running
# take more while another waits for a core (shared machines), in chunks
# shrinking with what is left.  Either way each iteration computes its own
# elements in the same order, so results do not depend on it.
SCHEDULE = "guided"

# Trip count assumed for a loop whose bounds are not constants.
_UNKNOWN_TRIPS = 16


def _min_bound(value: ir.Value) -> int | None:
    """An upper bound of ``value`` when it is an ``affine.min`` with a
    constant among its results (a tile's size, ``min(256, 784 - k)``): the
    smallest such constant."""
    owner = value.owner
    if not isinstance(owner, ir.Operation) and hasattr(owner, "operation"):
        owner = owner.operation
    if not isinstance(owner, ir.Operation) or owner.name != "affine.min":
        return None
    consts = []
    for expr in ir.AffineMapAttr(owner.attributes["map"]).value.results:
        try:
            consts.append(ir.AffineConstantExpr(expr).value)
        except ValueError:
            pass
    return min(consts) if consts else None


def _trips(lb: ir.Value, ub: ir.Value, step: ir.Value) -> int:
    lo, hi, st = constant_index(lb), constant_index(ub), constant_index(step)
    if hi is None:
        # a partial tile's bound: its full size (the last tile is the only
        # smaller one)
        hi = _min_bound(ub)
    if lo is None or hi is None or not st:
        return _UNKNOWN_TRIPS
    return max(0, -(-(hi - lo) // st))


def _bounds(op: ir.Operation) -> list[tuple[ir.Value, ir.Value, ir.Value]]:
    """(lower, upper, step) per dimension of an scf.parallel or scf.for."""
    ops = list(op.operands)
    if op.name == "scf.for":
        return [(ops[0], ops[1], ops[2])]
    n = len(op.regions[0].blocks[0].arguments)
    return [(ops[i], ops[n + i], ops[2 * n + i]) for i in range(n)]


def _op_cost(op: ir.Operation) -> int:
    """One per scalar operation; a vector operation counts its elements / 8;
    an op marked ``gradir.work`` (rlx-matmul-kernels' kernel calls) that."""
    if WORK in op.attributes:
        return max(1, ir.IntegerAttr(op.attributes[WORK]).value)
    for r in op.results:
        if isinstance(r.type, ir.VectorType):
            n = 1
            for d in ir.VectorType(r.type).shape:
                n *= d
            return max(1, n // 8)
    return 1


def estimated_work(op: ir.Operation) -> int:
    """Operations ``op`` executes: its body's, times its trip count for loops."""
    body = 0
    for region in op.regions:
        for block in region.blocks:
            for inner in block_ops(block):      # no OpView made (issue 14, compile time)
                body += estimated_work(inner)
    if op.name in ("scf.for", "scf.parallel"):
        trips = 1
        for b in _bounds(op):
            trips *= _trips(*b)
        return trips * body
    return _op_cost(op) + body


def _parallel_ancestor(op: ir.Operation) -> bool:
    parent = op.parent
    while parent is not None and parent.name != "func.func":
        if parent.name == "scf.parallel":
            return True
        parent = parent.parent
    return False


def _parallel_dim(bounds) -> int | None:
    """The dimension to run on the threads: the first one with two
    iterations or more (leading one-iteration dimensions are skipped)."""
    for dim, b in enumerate(bounds):
        trips = _trips(*b)
        if trips >= 2:
            return dim
        if trips != 1:
            return None
    return None


def _restructure(par: ir.Operation, parallel_dim: int | None) -> ir.Operation | None:
    """Replaces ``par`` by scf.for loops over its dimensions, dimension
    ``parallel_dim`` (None: none) kept as a one-dimensional scf.parallel,
    which it returns; the body moves unchanged into the innermost loop."""
    bounds = _bounds(par)
    kept = None
    old_block = par.regions[0].blocks[0]
    ivs = []
    ip = ir.InsertionPoint(par)
    with par.location:
        for dim, (lb, ub, step) in enumerate(bounds):
            if dim == parallel_dim:
                new = ir.Operation.create(
                    "scf.parallel", results=[], operands=[lb, ub, step],
                    attributes={"operandSegmentSizes":
                                ir.DenseI32ArrayAttr.get([1, 1, 1, 0])},
                    regions=1, ip=ip)
                kept = new
                block = new.regions[0].blocks.append(ir.IndexType.get())
                with ir.InsertionPoint(block):
                    term = ir.Operation.create("scf.reduce", operands=[],
                                               attributes={}, regions=0)
                ivs.append(block.arguments[0])
                ip = ir.InsertionPoint(term)
                continue
            with ip:
                loop = scf.ForOp(lb, ub, step)
            with ir.InsertionPoint(loop.body):
                term = scf.YieldOp([])
            ivs.append(loop.induction_variable)
            ip = ir.InsertionPoint(term)
    anchor = ip.ref_operation
    for old_iv, iv in zip(old_block.arguments, ivs):
        old_iv.replace_all_uses_with(iv)
    # plain ops: an OpView of each imported its dialect's module (vector,
    # affine, memref: ~8 ms on the first compile; issue 14, compile time)
    for inner in block_ops(old_block):
        if inner.name == "scf.reduce":
            continue
        inner.move_before(anchor)
    par.erase()
    return kept


@dataclass(frozen=True)
class RlxParallelLoops(ModulePass):
    """Runs the scf.parallel loops worth it on OpenMP threads; the others become scf.for.

    The CPU pipeline runs it on memrefs, after ``convert-linalg-to-parallel-loops``
    and ``scf-forall-to-parallel`` (the schedule's matmul strips).  A loop
    nest is kept parallel when it is not nested in another scf.parallel, its
    estimated work (operations executed, vector ones by elements / 8) is at
    least ``min-work`` and one of its dimensions has at least two
    iterations; only its first such dimension stays parallel (leading
    one-iteration dimensions become scf.for loops around it, the later ones
    scf.for loops inside, which LLVM vectorizes; a collapsed nest would not
    vectorize).  Every other scf.parallel
    becomes scf.for loops (all of them with ``threads=1``).  An scf.for
    marked ``gradir.independent_iterations`` (rlx-to-linalg's loops over
    blocks of images, whose iterations write disjoint slices) counts as a
    one-dimensional scf.parallel (with ``threads=1`` it stays as it is).  With
    ``threads`` > 1 the pass then runs ``convert-scf-to-openmp{num-threads=N}``,
    which turns each kept loop into an OpenMP work-sharing loop (``SCHEDULE``:
    guided, chunks of iterations dealt as threads come free), and
    inlines the ``memref.alloca_scope`` that pass wraps each body in
    (``convert-scf-to-cf`` cannot lower loops inside one; a body with
    ``memref.alloca`` keeps the scope's meaning as LLVM stacksave/stackrestore).
    Every iteration writes its own elements and computes them in the
    sequential order, whichever thread runs it, so results are bitwise the
    same from run to run and at any thread count.  A loop with
    reductions (scf.reduce operands, which the CPU pipeline never creates)
    is refused.

        scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c512) step (%c1, %c1) {
          ...
        }
    becomes (threads=2)
        omp.parallel num_threads(%c2_i32 : i32) {
          omp.wsloop schedule(guided) {
            omp.loop_nest (%i) : index = (%c0) to (%c64) step (%c1) {
              scf.for %j = %c0 to %c512 step %c1 {
                ...
              }
              omp.yield
            }
          }
          omp.terminator
        }
    """

    name = "rlx-parallel-loops"

    threads: int = option(1, "threads the parallel loops will run on (1: none stays parallel)")
    min_work: int = option(MIN_WORK, "estimated operations below which a loop nest stays "
                                     "sequential")
    hot_min_work: int = option(-1, "estimated operations from which a loop nest below min-work "
                                   "runs on the threads while libomp's block time is nonzero "
                                   "(-1: min-work, no such loops)")

    def check_options(self):
        if self.threads < 1:
            raise self.bad_option("threads", "be at least 1", self.threads)
        if self.min_work < 0:
            raise self.bad_option("min-work", "not be negative", self.min_work)
        if self.hot_min_work < -1:
            raise self.bad_option("hot-min-work", "be -1 or more", self.hot_min_work)

    def apply(self, module: ir.Operation) -> None:
        # One walk finds the loops (and the OpenMP regions already there);
        # each walk of the LeNet step's module is ~4 ms of Python (issue 14,
        # compile time: the pass walked it six times).
        from ..linalg.conv import INDEPENDENT_ITERATIONS
        threaded = self.threads > 1
        found = collect_ops(module, lambda op: op.name in _WANTED or WORK in op.attributes)
        bad = [op for op in found if WORK in op.attributes
               and not isinstance(op.attributes[WORK], ir.IntegerAttr)]
        for op in bad:
            self.error(op, f"rlx-parallel-loops: '{WORK}' must be an integer attribute "
                           "(the op's operation count)")
        if bad:
            raise self.failure()
        before = {op for op in found if op.name == "omp.parallel"}
        loops = []
        for op in found:
            if op.name == "scf.parallel":
                loops.append(op)
            elif threaded and op.name == "scf.for" and INDEPENDENT_ITERATIONS in op.attributes:
                par = self._independent_loop(op)
                if par is not None:
                    loops.append(par)
        if module.name == "scf.parallel":
            loops.insert(0, module)
        kept = []
        # Outer loops first: a kept loop's inner scf.parallel loops are then
        # known to be nested in a parallel one.
        for par in loops:
            if par.results:
                self.error(par.location, "rlx-parallel-loops: scf.parallel with reductions "
                                         "is not supported")
                raise self.failure()
            dim, hot_only = None, False
            if threaded and not _parallel_ancestor(par):
                work = estimated_work(par)
                hot_min = self.min_work if self.hot_min_work < 0 else self.hot_min_work
                if work >= min(self.min_work, hot_min):
                    dim = _parallel_dim(_bounds(par))
                    hot_only = dim is not None and work < self.min_work
            hot = _hot_flag(module, par) if hot_only else None
            if not (dim == 0 and len(_bounds(par)) == 1):
                par = _restructure(par, dim)
            if par is not None:
                # the loops kept, in walk order (each replaced in place), each
                # with its condition (None: always on the threads)
                kept.append((par, hot))
        if threaded and kept:
            # (none kept: no pass to run; issue 14, compile time)
            # convert-scf-to-openmp replaces each kept loop by one
            # omp.parallel in place, so they come back in this order
            regions = [r for r in self._to_openmp(module) if r not in before]
            if len(regions) != len(kept):
                self.error(module.location, f"rlx-parallel-loops: {len(kept)} loops kept, "
                                            f"{len(regions)} OpenMP regions made")
                raise self.failure()
            for region, (_loop, hot) in zip(regions, kept):
                if hot is not None:
                    _set_if(region, hot)

    def _independent_loop(self, loop: ir.Operation) -> ir.Operation | None:
        """``loop``, an ``scf.for`` marked INDEPENDENT_ITERATIONS (rlx-to-linalg's
        loops over blocks of images), replaced by the one-dimensional
        scf.parallel it returns when it is worth it as an scf.parallel would
        be (not nested in a parallel loop, ``min-work``, two iterations or
        more, no results); None when it stays."""
        if loop.results or _parallel_ancestor(loop) or _trips(*_bounds(loop)[0]) < 2 \
                or estimated_work(loop) < self.min_work or shared_write(loop) is not None:
            return None
        lb, ub, step = _bounds(loop)[0]
        with loop.location:
            par = ir.Operation.create(
                "scf.parallel", results=[], operands=[lb, ub, step],
                attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 1, 1, 0])},
                regions=1, ip=ir.InsertionPoint(loop))
            block = par.regions[0].blocks.append(ir.IndexType.get())
            with ir.InsertionPoint(block):
                term = ir.Operation.create("scf.reduce", operands=[], attributes={},
                                           regions=0)
        old = loop.regions[0].blocks[0]
        old.arguments[0].replace_all_uses_with(block.arguments[0])
        for inner in block_ops(old)[:-1]:       # all but scf.yield
            inner.move_before(term)
        loop.erase()
        return par

    def _to_openmp(self, module: ir.Operation) -> list[ir.Operation]:
        """Runs ``convert-scf-to-openmp`` on the kept loops, then inlines the
        ``memref.alloca_scope`` it wraps each body in (scf.for loops inside
        one would become blocks there, which alloca_scope forbids; bodies
        that allocate on the stack keep their scope as LLVM
        stacksave/stackrestore, which is what the scope lowers to)."""
        from ...passes.pipeline import build_pass_manager
        build_pass_manager(f"builtin.module(convert-scf-to-openmp{{num-threads={self.threads}}})",
                           module.context).run(module)
        # MLIR's walk and C API, inner ops first: no op wrapped for Python
        # (each omp op wrapped ran a failing import of mlir.dialects.omp, which
        # does not exist; issue 14, compile time)
        scopes, regions = [], []
        schedule = ir.Attribute.parse(f"#omp<schedulekind {SCHEDULE}>")
        for op in collect_ops(module, lambda o: o.name in _AFTER, post_order=True):
            if op.name == "omp.parallel":
                regions.append(op)      # never nested in one another: walk order
                continue
            if op.name == "omp.wsloop":
                if SCHEDULE != "static":
                    op.attributes["schedule_kind"] = schedule
                continue
            parent = parent_op(op)
            if parent is not None and parent.name == "omp.loop_nest":
                scopes.append(op)
        for scope in scopes:
            _inline_alloca_scope(scope)
        return regions


# What apply's walk looks for, and _to_openmp's after the conversion.
# Ops whose result views their operand 0's buffer, and ops that write the
# buffer of their operand ``i`` (the indices, if any, follow it).
_VIEWS = frozenset(("memref.subview", "memref.cast", "memref.reinterpret_cast",
                    "memref.transpose", "memref.collapse_shape", "memref.expand_shape",
                    "memref.view"))
_WRITES = {"memref.store": 1, "memref.copy": 1, "memref.atomic_rmw": 1, "vector.store": 1,
           "vector.transfer_write": 1, "vector.maskedstore": 2, "vector.scatter": 4}


def shared_write(loop: ir.Operation) -> ir.Operation | None:
    """The first op of ``loop``'s body that writes a buffer made outside the
    loop at addresses that do not depend on the iteration (neither through a
    view of it nor through the op's indices), else None.  Iterations run on
    several threads would race there: an INDEPENDENT_ITERATIONS loop with
    such a write stays serial.  (Bufferization gave the layer-1 weight
    gradient of torchvision's DenseNet-121 an im2col buffer from outside
    its loop over channel blocks; at 2 threads that gradient differed from
    run to run.)  Kernel calls are not looked into: rlx-matmul-kernels and
    the other kernel passes call them on the operands the linalg op had."""
    loop = loop.operation
    body = [op for op in collect_ops(loop, lambda o: True) if op != loop]
    inside = set(body)
    varying = {loop.regions[0].blocks[0].arguments[0]}
    for op in body:
        if any(v in varying for v in op.operands):
            varying.update(op.results)
    for op in body:
        at = _WRITES.get(op.name)
        if at is None or at >= len(op.operands):
            continue
        v = op.operands[at]
        varies = any(i in varying for i in list(op.operands)[at + 1:])
        while not varies:
            varies = v in varying
            owner = v.owner
            if isinstance(owner, ir.Block):
                parent = owner.owner
                if parent is not None and (parent.operation == loop
                                           or parent.operation in inside):
                    varies = True       # a block argument of the body: its own
                else:
                    break               # a function argument: shared
                continue
            owner = owner.operation
            if owner not in inside:
                break                   # made outside the loop: shared
            if owner.name not in _VIEWS:
                varies = True           # made by an iteration: its own
                continue
            v = owner.operands[0]
        if not varies:
            return op
    return None


_WANTED = frozenset(("scf.parallel", "scf.for", "omp.parallel"))
_AFTER = frozenset(("memref.alloca_scope", "omp.wsloop", "omp.parallel"))

_BLOCKTIME = "kmp_get_blocktime"


def _hot_flag(module: ir.Operation, par: ir.Operation) -> ir.Value:
    """Computes ``kmp_get_blocktime() != 0`` just before ``par``: the i1
    that becomes the ``if`` of its OpenMP region.  libomp's
    ``kmp_get_blocktime`` (declared in ``module`` once, as an llvm.func) is
    the calling thread's block time."""
    # No LLVM op, type or attribute reaches Python (that imports
    # mlir.dialects.llvm, 11 ms; issue 14, compile time): the declaration is
    # parsed in a module of its own and moved, the call's LLVM attributes are
    # set from a builtin array (_compat.set_attribute_from).
    body = module.regions[0].blocks[0]
    if not any(symbol_name(fn) == _BLOCKTIME for fn in functions(module, "llvm.func")):
        scratch = ir.Module.parse(f"llvm.func @{_BLOCKTIME}() -> i32")
        child_ops(scratch, lambda op: True)[0].move_before(block_ops(body)[0])
    i32 = ir.IntegerType.get_signless(32)
    with par.location, ir.InsertionPoint(par):
        call = ir.Operation.create("llvm.call", results=[i32], operands=[], attributes={
            "callee": ir.FlatSymbolRefAttr.get(_BLOCKTIME),
            "op_bundle_sizes": ir.DenseI32ArrayAttr.get([]),
            "operandSegmentSizes": ir.DenseI32ArrayAttr.get([0, 0])})
        holder = ir.Attribute.parse("[#llvm.cconv<ccc>, #llvm.tailcallkind<none>, "
                                    "#llvm.fastmath<none>]")
        for i, name in enumerate(("CConv", "TailCallKind", "fastmathFlags")):
            set_attribute_from([call], name, holder, i)
        zero = arith.ConstantOp(i32, 0).result
        return arith.CmpIOp(arith.CmpIPredicate.ne, call.result, zero).result


# omp.parallel's operand groups: allocate_vars, allocator_vars, if_expr,
# num_threads, private_vars, reduction_vars
_IF_SEGMENT = 2


def _set_if(region: ir.Operation, cond: ir.Value) -> None:
    """Gives ``region`` (an omp.parallel without one) the ``if(cond)``
    clause: recreated with ``cond`` among its operands, its body moved."""
    sizes = list(ir.DenseI32ArrayAttr(region.attributes["operandSegmentSizes"]))
    if sizes[_IF_SEGMENT]:
        return
    at = sum(sizes[:_IF_SEGMENT])
    operands = list(region.operands)
    operands.insert(at, cond)
    sizes[_IF_SEGMENT] = 1
    attributes = {name: region.attributes[name] for name in region.attributes}
    attributes["operandSegmentSizes"] = ir.DenseI32ArrayAttr.get(sizes)
    new = ir.Operation.create("omp.parallel", results=[], operands=operands,
                              attributes=attributes, regions=1,
                              loc=region.location, ip=ir.InsertionPoint(region))
    region.regions[0].blocks[0].append_to(new.regions[0])
    region.erase()


def _has_alloca(op: ir.Operation) -> bool:
    # MLIR's walk, stopped at the first alloca: no op wrapped for Python
    # (an OpView of each imported the vector, affine and memref dialect
    # modules on the first compile; issue 14, compile time)
    found = []
    stop, go = ir.WalkResult.INTERRUPT, ir.WalkResult.ADVANCE

    def visit(inner):
        if inner.name == "memref.alloca":
            found.append(inner)
            return stop
        return go

    op.walk(visit, ir.WalkOrder.PRE_ORDER)
    return bool(found)


def _inline_alloca_scope(scope: ir.Operation) -> None:
    block = scope.regions[0].blocks[0]
    ops = block_ops(block)
    term = ops[-1]
    if scope.results or term.operands:
        return
    stack = _has_alloca(scope)
    with ir.InsertionPoint(scope), scope.location:
        if stack:
            ptr = ir.Type.parse("!llvm.ptr")
            saved = ir.Operation.create("llvm.intr.stacksave", results=[ptr]).result
        for op in ops[:-1]:
            op.move_before(scope)
        if stack:
            ir.Operation.create("llvm.intr.stackrestore", operands=[saved])
    scope.erase()
