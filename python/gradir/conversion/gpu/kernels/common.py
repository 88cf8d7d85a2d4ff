"""gpu-linalg-to-kernels: every linalg.generic on device buffers becomes a
``gpu.launch`` kernel (elementwise, block reductions, tiled GEMM)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import affine, arith, gpu, memref, scf
from mlir.dialects import math as math_d

from ... import _compat
from ...passes.base import ModulePass, PassOptionError, option
from .common import host_functions, index, index_type, walk
from .gpu_fold_zero_init import ZERO_INIT

__all__ = ["GpuLinalgToKernels", "Generic", "COMBINERS", "KERNEL_ATTRIBUTES"]

PARALLEL, REDUCTION = "parallel", "reduction"
WORKGROUP = "#gpu.address_space<workgroup>"

# Reduction combiners the block reductions know, with their identity.
_INF = float("inf")
COMBINERS = {
    "arith.addf": 0.0, "arith.mulf": 1.0, "arith.maximumf": -_INF, "arith.minimumf": _INF,
    "arith.maxnumf": -_INF, "arith.minnumf": _INF, "arith.addi": 0, "arith.muli": 1,
    "arith.ori": 0, "arith.xori": 0, "arith.andi": -1, "arith.maxsi": "smin",
    "arith.minsi": "smax", "arith.maxui": 0, "arith.minui": -1,
}
# Combiners with an atomic read-modify-write (for split reductions).
_ATOMIC = {"arith.addf": arith.AtomicRMWKind.addf, "arith.addi": arith.AtomicRMWKind.addi,
           "arith.maximumf": arith.AtomicRMWKind.maximumf,
           "arith.minimumf": arith.AtomicRMWKind.minimumf,
           "arith.maxsi": arith.AtomicRMWKind.maxs, "arith.minsi": arith.AtomicRMWKind.mins,
           "arith.maxui": arith.AtomicRMWKind.maxu, "arith.minui": arith.AtomicRMWKind.minu,
           "arith.ori": arith.AtomicRMWKind.ori, "arith.andi": arith.AtomicRMWKind.andi}


def _atomic_type(t: ir.Type) -> bool:
    return str(t) in ("f32", "f64", "i32", "i64")


_CASTS = frozenset({"arith.extf", "arith.truncf", "arith.sitofp", "arith.uitofp",
                    "arith.extsi", "arith.extui"})

# GEMM tile configurations: (BM, BN, BK, TM, TN) for 16x16 threads; the
# first whose grid fills the GPU wins (see _gemm_config).
GEMM_CONFIGS = ((128, 128, 8, 8, 8), (64, 64, 16, 4, 4), (32, 32, 16, 2, 2),
                (16, 16, 16, 1, 1))


def _op(x):
    return x.operation if hasattr(x, "operation") else x


def _iterator_kind(attr: ir.Attribute) -> str:
    return REDUCTION if "reduction" in str(attr) else PARALLEL


class GenericError(Exception):
    pass


class Generic:
    """What the kernel builders need to know about one ``linalg.generic``."""

    def __init__(self, op: ir.Operation):
        self.op = op
        sizes = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
        operands = list(op.operands)
        self.inputs = operands[:sizes[0]]
        self.outputs = operands[sizes[0]:sizes[0] + sizes[1]]
        self.maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
        self.iterators = [_iterator_kind(a) for a in ir.ArrayAttr(op.attributes["iterator_types"])]
        self.block = op.regions[0].blocks[0]
        self.body_args = list(self.block.arguments)
        self.ranges = self._ranges()
        self.parallel = [d for d, k in enumerate(self.iterators) if k == PARALLEL]
        self.reduction = [d for d, k in enumerate(self.iterators) if k == REDUCTION]
        self.zero_init = ZERO_INIT in op.attributes

    @property
    def operands(self):
        return self.inputs + self.outputs

    def _ranges(self) -> list[int]:
        n = len(self.iterators)
        ranges: list[int | None] = [None] * n
        for value, amap in zip(self.operands, self.maps):
            if not isinstance(value.type, ir.MemRefType):
                continue
            shape = value.type.shape
            if not value.type.has_static_shape:
                raise GenericError(f"dynamic shape {value.type} is not supported")
            for pos, expr in enumerate(amap.results):
                if isinstance(expr, ir.AffineDimExpr):
                    d = ir.AffineDimExpr(expr).position
                    if ranges[d] is None:
                        ranges[d] = shape[pos]
        missing = [d for d, r in enumerate(ranges) if r is None]
        if missing:
            raise GenericError(f"cannot infer the extent of loop dimension(s) {missing}")
        return [int(r) for r in ranges]

    def terminator(self) -> ir.Operation:
        return _op(list(self.block.operations)[-1])

    def used(self, k: int) -> bool:
        return len(list(self.body_args[k].uses)) > 0


# --- IR building helpers ------------------------------------------------------

def _const(t: ir.Type, value) -> ir.Value:
    if isinstance(t, ir.IndexType):
        return index(value)
    if isinstance(t, ir.IntegerType):
        w = t.width
        if value == "smin":
            value = -(1 << (w - 1))
        elif value == "smax":
            value = (1 << (w - 1)) - 1
        elif value == -1 and w == 1:
            value = 1
        return arith.ConstantOp(t, ir.IntegerAttr.get(t, int(value))).result
    return arith.ConstantOp(t, ir.FloatAttr.get(t, float(value))).result


def _apply_map(amap: ir.AffineMap, dims: list[ir.Value]) -> list[ir.Value]:
    out = []
    for expr in amap.results:
        if isinstance(expr, ir.AffineDimExpr):
            out.append(dims[ir.AffineDimExpr(expr).position])
        elif isinstance(expr, ir.AffineConstantExpr):
            out.append(index(expr.value))
        else:
            single = ir.AffineMap.get(amap.n_dims, amap.n_symbols, [expr])
            out.append(affine.AffineApplyOp(single, dims).result)
    return out


def _delinearize(linear: ir.Value, ranges: list[int]) -> list[ir.Value]:
    """Row-major coordinates of ``linear`` (assumed < prod(ranges))."""
    out = []
    stride = math.prod(ranges)
    for i, r in enumerate(ranges):
        stride //= r
        if r == 1:
            out.append(index(0))
            continue
        v = linear if stride == 1 else arith.divui(linear, index(stride))
        if i > 0:
            v = arith.remui(v, index(r))
        out.append(v)
    return out


def _ult(a: ir.Value, b) -> ir.Value:
    b = b if isinstance(b, ir.Value) else index(b)
    return arith.cmpi(arith.CmpIPredicate.ult, a, b)


def _if(cond: ir.Value, result_types=()):
    op = scf.IfOp(cond, list(result_types), has_else=bool(result_types))
    return op


def _pow2_ceil(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def _launch(grid, block, workgroup_types=(), name=None):
    """A ``gpu.launch`` with its body block; returns (op, block, ids,
    workgroup buffers) where ids = (bx, by, bz, tx, ty, tz).  ``name`` =
    (module, function) names the kernel after outlining."""
    g = [index(x) for x in list(grid) + [1] * (3 - len(grid))]
    b = [index(x) for x in list(block) + [1] * (3 - len(block))]
    op, body = _compat.gpu_launch(g, b, list(workgroup_types))
    if name is not None:
        op.attributes["module"] = ir.FlatSymbolRefAttr.get(name[0])
        op.attributes["function"] = ir.FlatSymbolRefAttr.get(name[1])
    args = list(body.arguments)
    return op, body, args[:6], args[12:]


class _Namer:
    """Kernel names: every kernel of host function @f goes to gpu.module
    @f_kernels as @f_<kind>_<n>; ``attrs`` collects per-kernel attributes."""

    def __init__(self, fn_name: str, taken: set):
        self.module = fn_name + "_kernels"
        while self.module in taken:
            self.module += "_"
        taken.add(self.module)
        self.fn = fn_name
        self.count = 0
        self.attrs: dict[str, dict] = {}

    def __call__(self, kind: str):
        self.count += 1
        return self.module, f"{self.fn}_{kind}_{self.count - 1}"


KERNEL_ATTRIBUTES = "gradir.kernel_attributes"


def _workgroup_type(shape, elt) -> ir.Type:
    return ir.MemRefType.get(list(shape), elt, memory_space=ir.Attribute.parse(WORKGROUP))


class _Cloner:
    """Clones a generic's body ops at the current insertion point with a
    value mapping; values computed on the host from device buffers
    (``memref.load`` and scalar ops on its result) are cloned into the
    kernel too, so the host never reads device memory."""

    def __init__(self, mapping=None):
        self.mapping = {}
        for k, v in (mapping or {}).items():
            self.mapping[k] = self.value(v)

    def value(self, v: ir.Value) -> ir.Value:
        if v in self.mapping:
            return self.mapping[v]
        sunk = self._sink(v)
        return sunk if sunk is not None else v

    def _sink(self, v: ir.Value):
        owner = v.owner
        if not isinstance(owner, (ir.Operation, ir.OpView)):
            return None
        op = _op(owner)
        if not _reads_device_scalar(op):
            return None
        operands = [self.value(o) for o in op.operands]   # their clones come first
        new = op.clone(ip=ir.InsertionPoint.current)
        for i, o in enumerate(operands):
            new.operands[i] = o
        for old_r, new_r in zip(op.results, new.results):
            self.mapping[old_r] = new_r
        return self.mapping[v]

    def _remap(self, op: ir.Operation) -> None:
        for i, operand in enumerate(list(op.operands)):
            mapped = self.value(operand)
            if mapped != operand:
                op.operands[i] = mapped
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    self._remap(_op(inner))

    def clone_ops(self, block: ir.Block, index_values=None) -> list[ir.Value]:
        """Clones ``block``'s ops but its terminator; returns the mapped
        terminator operands.  ``linalg.index d`` maps to index_values[d]."""
        ops = [_op(o) for o in block.operations]
        for op in ops[:-1]:
            if op.name == "linalg.index":
                dim = ir.IntegerAttr(op.attributes["dim"]).value
                self.mapping[op.results[0]] = index_values[dim]
                continue
            new = op.clone(ip=ir.InsertionPoint.current)
            self._remap(new)
            for old_r, new_r in zip(op.results, new.results):
                self.mapping[old_r] = new_r
        return [self.value(v) for v in ops[-1].operands]


def _reads_device_scalar(op: ir.Operation) -> bool:
    """Host ops computing a scalar from device memory (to be sunk)."""
    if op.name == "memref.load":
        return True
    if not op.name.startswith(("arith.", "math.")) or op.name == "arith.constant":
        return False
    for v in op.operands:
        owner = v.owner
        if isinstance(owner, (ir.Operation, ir.OpView)) and _reads_device_scalar(_op(owner)):
            return True
    return False


# --- the pass -------------------------------------------------------------------

@dataclass(frozen=True)
class GpuLinalgToKernels(ModulePass):
    """Turns every linalg.generic on device buffers into a gpu.launch kernel.

    Run ``linalg-generalize-named-ops`` first.  Three kernel shapes:
    * all-parallel ops: one thread per element, thread x along the
      innermost loop dimension (coalesced), bounds checked;
    * contractions ``C += A*B`` (matmul, batch_matmul, transposed operands):
      a 16x16-thread block computes a BMxBN tile of C, staging BKxBM and
      BKxBN tiles of A and B in workgroup memory (coalesced loads, padded
      against bank conflicts), each thread accumulating TMxTN outputs in
      registers; the tile size is chosen so the grid fills ``sm-count``
      multiprocessors;
    * reductions with a recognised combiner (add, mul, max, min, and, or,
      xor; several outputs allowed): a block per group of outputs, threads
      striding over the reduction space (along the innermost dimension,
      or along the outer one when the innermost loop is parallel, so loads
      stay coalesced), then a tree in workgroup memory.
    Any other reduction runs one thread per output with a serial loop
    (correct, slower); ``tiled=false`` forces that form everywhere.

        linalg.generic {iterator_types = ["parallel"]} ins(%a) outs(%b) {...}
    becomes
        gpu.launch blocks(%bx, ...) in (%gx = %c1, ...) threads(%tx, ...) in (%c64, ...) {
          %i = ... %bx * 64 + %tx
          scf.if %i < 40 { %v = memref.load %a[%i] ... memref.store ..., %b[%i] }
          gpu.terminator
        }
    """

    name = "gpu-linalg-to-kernels"
    block_size: int = option(256, "threads per block of elementwise and reduction kernels")
    sm_count: int = option(132, "multiprocessors of the target GPU (GEMM tile choice)")
    tiled: bool = option(True, "tiled GEMM and block-reduction kernels (false: one "
                               "thread per output with serial reduction loops)")
    split: bool = option(True, "split reductions and GEMM K loops over more blocks "
                               "(atomic accumulation) when the outputs alone do not fill "
                               "the GPU")
    gemm_min_blocks: int = option(2, "blocks per multiprocessor the GEMM kernels are "
                                     "compiled for (nvvm.minctasm; 0: no limit)")

    def __post_init__(self):
        if not 32 <= self.block_size <= 1024 or self.block_size % 32:
            raise PassOptionError(f"option 'block-size' of pass '{self.name}' must be a "
                                  f"multiple of 32 from 32 to 1024, got {self.block_size}")
        if self.sm_count < 1:
            raise PassOptionError(f"option 'sm-count' of pass '{self.name}' must be at "
                                  f"least 1, got {self.sm_count}")
        if self.gemm_min_blocks < 0:
            raise PassOptionError(f"option 'gemm-min-blocks' of pass '{self.name}' must "
                                  f"not be negative, got {self.gemm_min_blocks}")

    def apply(self, module: ir.Operation) -> None:
        failed = False
        taken = {ir.StringAttr(o.attributes["sym_name"]).value
                 for o in module.regions[0].blocks[0].operations
                 if "sym_name" in o.attributes}
        attrs = {}
        for fn in host_functions(module):
            namer = _Namer(ir.StringAttr(fn.attributes["sym_name"]).value, taken)
            object.__setattr__(self, "_namer", namer)
            for op in list(walk(fn, into_kernels=False)):
                if not op.name.startswith("linalg.") or op.name in ("linalg.yield",
                                                                     "linalg.index"):
                    continue
                if op.name != "linalg.generic":
                    self.error(op, f"'{op.name}' must be generalized first "
                                   "(run linalg-generalize-named-ops)")
                    failed = True
                    continue
                if any(not isinstance(v.type, ir.MemRefType) for v in _outputs(op)):
                    self.error(op, "linalg on tensors: bufferize before "
                                   "gpu-linalg-to-kernels")
                    failed = True
                    continue
                try:
                    gen = Generic(op)
                except GenericError as err:
                    self.error(op, str(err))
                    failed = True
                    continue
                with ir.InsertionPoint(op), op.location:
                    self._lower(gen)
                op.erase()
            attrs.update(namer.attrs)
        if failed:
            raise self.failure()
        if attrs:
            i32 = ir.IntegerType.get_signless(32)
            module.attributes[KERNEL_ATTRIBUTES] = ir.DictAttr.get(
                {k: ir.DictAttr.get({a: ir.IntegerAttr.get(i32, v) for a, v in d.items()})
                 for k, d in attrs.items()})
        _erase_dead_host_scalars(module)

    def _lower(self, gen: Generic) -> None:
        if not gen.reduction:
            return self._elementwise(gen)
        if self.tiled:
            gemm = _match_gemm(gen)
            if gemm is not None and self._gemm_worthwhile(gen, gemm):
                return self._gemm(gen, gemm)
            combiners = _match_reduction(gen)
            if combiners is not None:
                return self._reduction(gen, combiners)
        return self._elementwise(gen)

    # -- elementwise (and serial reductions) -----------------------------------
    def _elementwise(self, gen: Generic) -> None:
        prange = [gen.ranges[d] for d in gen.parallel]
        total = math.prod(prange)
        if total == 0:
            return
        threads = min(self.block_size, total)
        if threads > 32:
            threads = (threads + 31) // 32 * 32
        blocks = -(-total // threads)
        _, body, ids, _ = _launch([blocks], [threads],
                                  name=self._namer("reduce_serial" if gen.reduction else "map"))
        with ir.InsertionPoint(body):
            bx, tx = ids[0], ids[3]
            gid = tx if blocks == 1 else arith.addi(arith.muli(bx, index(threads)), tx)
            inner = body
            if blocks * threads != total:
                guard = _if(_ult(gid, total))
                inner = guard.then_block
            with ir.InsertionPoint(inner):
                pvals = _delinearize(gid, prange)
                dims: list = [None] * len(gen.ranges)
                for d, v in zip(gen.parallel, pvals):
                    dims[d] = v
                self._serial_body(gen, dims)
                if inner is not body:
                    scf.YieldOp([])
            gpu.TerminatorOp()

    def _serial_body(self, gen: Generic, dims: list) -> None:
        """Loads, the body (in serial loops over the reduction dims) and
        stores, for the parallel coordinates in ``dims``."""
        n_in = len(gen.inputs)
        outer = [d if d is not None else index(0) for d in dims]
        outs = []
        for j, out in enumerate(gen.outputs):
            k = n_in + j
            idx = _apply_map(gen.maps[k], outer)
            needs = gen.used(k) or bool(gen.reduction)
            if needs and gen.zero_init:
                value = _const(out.type.element_type, 0)
            else:
                value = memref.LoadOp(out, idx).result if needs else None
            outs.append((idx, value))
        if not gen.reduction:
            ins = [_load_operand(gen, k, dims) if gen.used(k) else None for k in range(n_in)]
            values = ins + [v for _, v in outs]
            results = _Cloner(dict(zip(gen.body_args, _fill_unused(gen, values)))).clone_ops(
                gen.block, dims)
        else:
            results = self._reduction_loops(gen, dims, 0, [v for _, v in outs])
        for (idx, _), value, out in zip(outs, results, gen.outputs):
            memref.StoreOp(value, out, idx)

    def _reduction_loops(self, gen: Generic, dims: list, level: int, accs: list) -> list:
        if level == len(gen.reduction):
            n_in = len(gen.inputs)
            ins = [_load_operand(gen, k, dims) if gen.used(k) else None for k in range(n_in)]
            values = _fill_unused(gen, ins + accs)
            return _Cloner(dict(zip(gen.body_args, values))).clone_ops(gen.block, dims)
        d = gen.reduction[level]
        loop = scf.ForOp(index(0), index(gen.ranges[d]), index(1), accs)
        with ir.InsertionPoint(loop.body):
            dims = list(dims)
            dims[d] = loop.induction_variable
            res = self._reduction_loops(gen, dims, level + 1, list(loop.inner_iter_args))
            scf.YieldOp(res)
        return list(loop.results)

    # -- block reductions ---------------------------------------------------------
    def _reduction(self, gen: Generic, combiners: list) -> None:
        prange = [gen.ranges[d] for d in gen.parallel]
        rrange = [gen.ranges[d] for d in gen.reduction]
        ptot, rtot = math.prod(prange), math.prod(rrange)
        if ptot == 0:
            return
        inner = gen.iterators[-1] == REDUCTION
        bs = self.block_size
        if inner:
            bx = min(bs, _pow2_ceil(max(rtot, 1)))
            by = max(1, min(bs // bx, ptot))
            grid = -(-ptot // by)
            tree, lanes = bx, by
        else:
            bx = min(32, _pow2_ceil(ptot))
            by = min(max(1, bs // bx), _pow2_ceil(max(rtot, 1)))
            grid = -(-ptot // bx)
            tree, lanes = by, bx
        n_in = len(gen.inputs)
        out_types = [o.type.element_type for o in gen.outputs]
        splits = 1
        if all(c in _ATOMIC for c in combiners) and all(_atomic_type(t) for t in out_types):
            splits = self._split_count(grid, rtot, tree * 16)
        chunk = -(-rtot // splits)
        if splits > 1 and gen.zero_init:
            for out in gen.outputs:
                self._zero_fill(out)
        wg = [_workgroup_type([by, bx], t) for t in out_types]
        _, body, ids, smem = _launch([grid, splits], [bx, by], wg,
                                     name=self._namer("reduce_split" if splits > 1 else "reduce"))
        with ir.InsertionPoint(body):
            bid, tx, ty = ids[0], ids[3], ids[4]
            if inner:
                p = ty if grid == 1 else arith.addi(arith.muli(bid, index(by)), ty)
                lane = tx
            else:
                p = tx if grid == 1 else arith.addi(arith.muli(bid, index(bx)), tx)
                lane = ty
            valid = _ult(p, ptot) if grid * lanes != ptot else None
            pc = p if valid is None else arith.minui(p, index(ptot - 1))
            pvals = _delinearize(pc, prange)
            lo, hi = lane, index(rtot)
            if splits > 1:
                start = arith.muli(ids[1], index(chunk))
                lo = arith.addi(start, lane)
                hi = arith.minui(arith.addi(start, index(chunk)), index(rtot))
            ub = hi if valid is None else arith.select(valid, hi, index(0))
            idents = [_const(t, COMBINERS[c]) for c, t in zip(combiners, out_types)]
            loop = scf.ForOp(lo, ub, index(tree), idents)
            with ir.InsertionPoint(loop.body):
                dims: list = [None] * len(gen.ranges)
                for d, v in zip(gen.parallel, pvals):
                    dims[d] = v
                for d, v in zip(gen.reduction, _delinearize(loop.induction_variable, rrange)):
                    dims[d] = v
                ins = [_load_operand(gen, k, dims) if gen.used(k) else None
                       for k in range(n_in)]
                accs = list(loop.inner_iter_args)
                values = _fill_unused(gen, ins + accs)
                results = _Cloner(dict(zip(gen.body_args, values))).clone_ops(gen.block, dims)
                scf.YieldOp(results)
            partials = list(loop.results)
            for buf, v in zip(smem, partials):
                memref.StoreOp(v, buf, [ty, tx])
            gpu.BarrierOp()
            s = tree // 2
            while s >= 1:
                active = _if(_ult(lane, s))
                with ir.InsertionPoint(active.then_block):
                    other = [ty, arith.addi(tx, index(s))] if inner else \
                        [arith.addi(ty, index(s)), tx]
                    for buf, c in zip(smem, combiners):
                        a = memref.LoadOp(buf, [ty, tx]).result
                        b = memref.LoadOp(buf, other).result
                        memref.StoreOp(_combine(c, a, b), buf, [ty, tx])
                    scf.YieldOp([])
                gpu.BarrierOp()
                s //= 2
            first = arith.cmpi(arith.CmpIPredicate.eq, lane, index(0))
            if valid is not None:
                first = arith.andi(first, valid)
            write = _if(first)
            with ir.InsertionPoint(write.then_block):
                dims = [None] * len(gen.ranges)
                for d, v in zip(gen.parallel, pvals):
                    dims[d] = v
                for j, (out, buf, c) in enumerate(zip(gen.outputs, smem, combiners)):
                    idx = _apply_map(gen.maps[n_in + j], dims)
                    total = memref.LoadOp(buf, [ty, tx]).result
                    if splits > 1:
                        memref.AtomicRMWOp(_ATOMIC[c], total, out, idx)
                        continue
                    if not gen.zero_init:
                        init = memref.LoadOp(out, idx).result
                        total = _combine(c, init, total)
                    memref.StoreOp(total, out, idx)
                scf.YieldOp([])
            gpu.TerminatorOp()

    def _split_count(self, blocks: int, units: int, min_units: int) -> int:
        """How many ways to split a reduction of ``units`` (at least
        ``min_units`` each) so that ``blocks`` times that fills the GPU."""
        if not self.split or blocks >= self.sm_count or units < 2 * min_units:
            return 1
        return max(1, min(-(-2 * self.sm_count // blocks), units // min_units))

    def _zero_fill(self, out: ir.Value) -> None:
        """A kernel storing zero in every element of ``out`` (before split
        kernels accumulate into it atomically)."""
        shape = list(out.type.shape)
        total = math.prod(shape)
        threads = min(self.block_size, max(total, 1))
        blocks = -(-total // threads)
        _, body, ids, _ = _launch([blocks], [threads], name=self._namer("zero"))
        with ir.InsertionPoint(body):
            gid = arith.addi(arith.muli(ids[0], index(threads)), ids[3])
            guard = _if(_ult(gid, total))
            with ir.InsertionPoint(guard.then_block):
                memref.StoreOp(_const(out.type.element_type, 0), out, _delinearize(gid, shape))
                scf.YieldOp([])
            gpu.TerminatorOp()

    # -- tiled GEMM ----------------------------------------------------------------
    def _gemm_worthwhile(self, gen: Generic, g: dict) -> bool:
        r = gen.ranges
        return r[g["m"]] >= 8 and r[g["n"]] >= 8

    def _gemm_config(self, gen: Generic, g: dict):
        r = gen.ranges
        batch = math.prod(r[d] for d in g["batch"])
        for cfg in GEMM_CONFIGS:
            bm, bn = cfg[0], cfg[1]
            if -(-r[g["m"]] // bm) * -(-r[g["n"]] // bn) * batch >= self.sm_count:
                return cfg
        return GEMM_CONFIGS[-1]

    def _gemm(self, gen: Generic, g: dict) -> None:
        r = gen.ranges
        M, N, K = r[g["m"]], r[g["n"]], r[g["k"]]
        brange = [r[d] for d in g["batch"]]
        bm, bn, bk, tm, tn = self._gemm_config(gen, g)
        a, b = gen.inputs
        c = gen.outputs[0]
        acc_t = c.type.element_type
        a_kinner = _innermost_dim(gen.maps[0]) == g["k"]
        b_kinner = _innermost_dim(gen.maps[1]) == g["k"]
        pad_a = 32 // bk if a_kinner else 0
        pad_b = 32 // bk if b_kinner else 0
        a_smem_t = g["a_cast"].results[0].type if g["a_cast"] is not None else a.type.element_type
        b_smem_t = g["b_cast"].results[0].type if g["b_cast"] is not None else b.type.element_type
        wg = [_workgroup_type([bk, bm + pad_a], a_smem_t),
              _workgroup_type([bk, bn + pad_b], b_smem_t)]
        ktiles = -(-K // bk)
        blocks = -(-N // bn) * -(-M // bm) * math.prod(brange)
        splits = self._split_count(blocks, ktiles, 8) if _atomic_type(acc_t) else 1
        per = -(-ktiles // splits)
        splits = -(-ktiles // per)
        if splits > 1 and gen.zero_init:
            self._zero_fill(c)
        grid = [-(-N // bn), -(-M // bm), math.prod(brange) * splits]
        name = self._namer("gemm_splitk" if splits > 1 else "gemm")
        if self.gemm_min_blocks > 0:
            self._namer.attrs[name[1]] = {"nvvm.minctasm": self.gemm_min_blocks}
        _, body, ids, (As, Bs) = _launch(grid, [16, 16], wg, name=name)
        with ir.InsertionPoint(body):
            bx, by, bz, tx, ty = ids[0], ids[1], ids[2], ids[3], ids[4]
            tid = arith.addi(arith.muli(ty, index(16)), tx)
            m0 = arith.muli(by, index(bm))
            n0 = arith.muli(bx, index(bn))
            batch_id = bz if splits == 1 else arith.divui(bz, index(splits))
            bvals = _delinearize(batch_id, brange) if brange else []
            zero = _const(acc_t, 0)
            rows = [arith.addi(ty, index(16 * i)) if i else ty for i in range(tm)]
            cols = [arith.addi(tx, index(16 * j)) if j else tx for j in range(tn)]
            k_lo, k_hi = index(0), index(ktiles)
            if splits > 1:
                k_lo = arith.muli(arith.remui(bz, index(splits)), index(per))
                k_hi = arith.minui(arith.addi(k_lo, index(per)), index(ktiles))
            loop = scf.ForOp(k_lo, k_hi, index(1), [zero] * (tm * tn))
            with ir.InsertionPoint(loop.body):
                k0 = arith.muli(loop.induction_variable, index(bk))
                self._gemm_load_tile(gen, g, 0, As, tid, m0, k0, bm, bk, M, K, a_kinner,
                                     bvals, g["m"], g["a_cast"])
                self._gemm_load_tile(gen, g, 1, Bs, tid, n0, k0, bn, bk, N, K, b_kinner,
                                     bvals, g["n"], g["b_cast"])
                gpu.BarrierOp()
                accs = list(loop.inner_iter_args)
                for kk in range(bk):
                    kkv = index(kk)
                    av = [memref.LoadOp(As, [kkv, rows[i]]).result for i in range(tm)]
                    bv = [memref.LoadOp(Bs, [kkv, cols[j]]).result for j in range(tn)]
                    for i in range(tm):
                        for j in range(tn):
                            acc = accs[i * tn + j]
                            if g["mul"] == "arith.mulf" and av[i].type == acc.type:
                                # one rounding, as cuBLAS: NVPTX keeps mul.rn/add.rn apart
                                accs[i * tn + j] = math_d.fma(av[i], bv[j], acc)
                            else:
                                prod = _binary(g["mul"], av[i], bv[j])
                                accs[i * tn + j] = _binary(g["add"], acc, prod)
                gpu.BarrierOp()
                scf.YieldOp(accs)
            accs = list(loop.results)
            for i in range(tm):
                gm = arith.addi(m0, rows[i])
                for j in range(tn):
                    gn = arith.addi(n0, cols[j])
                    conds = []
                    if M % bm:
                        conds.append(_ult(gm, M))
                    if N % bn:
                        conds.append(_ult(gn, N))
                    dims: list = [None] * len(r)
                    dims[g["m"]], dims[g["n"]] = gm, gn
                    for d, v in zip(g["batch"], bvals):
                        dims[d] = v
                    dims[g["k"]] = index(0)

                    def store(i=i, j=j, dims=dims):
                        idx = _apply_map(gen.maps[2], dims)
                        value = accs[i * tn + j]
                        if splits > 1:
                            memref.AtomicRMWOp(_ATOMIC[g["add"]], value, c, idx)
                            return
                        if not gen.zero_init:
                            old = memref.LoadOp(c, idx).result
                            value = _binary(g["add"], old, value)
                        memref.StoreOp(value, c, idx)

                    if conds:
                        cond = conds[0] if len(conds) == 1 else arith.andi(conds[0], conds[1])
                        guard = _if(cond)
                        with ir.InsertionPoint(guard.then_block):
                            store()
                            scf.YieldOp([])
                    else:
                        store()
            gpu.TerminatorOp()

    def _gemm_load_tile(self, gen, g, k, smem, tid, base, k0, bmn, bk, extent, K, k_inner,
                        bvals, mn_dim, cast):
        """Cooperative load of the (bk x bmn) tile of operand ``k`` into
        ``smem[kk][mn]``; consecutive threads read consecutive addresses."""
        operand = gen.inputs[k]
        per_thread = bmn * bk // 256
        for step in range(per_thread):
            e = arith.addi(tid, index(256 * step)) if step else tid
            if k_inner:
                kk, mn = arith.remui(e, index(bk)), arith.divui(e, index(bk))
            else:
                mn, kk = arith.remui(e, index(bmn)), arith.divui(e, index(bmn))
            gk = arith.addi(k0, kk)
            gmn = arith.addi(base, mn)
            conds = []
            if K % bk:
                conds.append(_ult(gk, K))
                gk = arith.minui(gk, index(K - 1))
            if extent % bmn:
                conds.append(_ult(gmn, extent))
                gmn = arith.minui(gmn, index(extent - 1))
            dims: list = [index(0)] * len(gen.ranges)
            dims[g["k"]] = gk
            dims[mn_dim] = gmn
            for d, v in zip(g["batch"], bvals):
                dims[d] = v
            v = memref.LoadOp(operand, _apply_map(gen.maps[k], dims)).result
            if cast is not None:
                v = _clone_unary(cast, v)
            if conds:
                ok = conds[0] if len(conds) == 1 else arith.andi(conds[0], conds[1])
                v = arith.select(ok, v, _const(v.type, 0))
            memref.StoreOp(v, smem, [kk, mn])


# --- matching -----------------------------------------------------------------------

def _outputs(op: ir.Operation):
    sizes = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    return list(op.operands)[sizes[0]:sizes[0] + sizes[1]]


def _fill_unused(gen: Generic, values: list) -> list:
    """Block arguments without uses map to themselves (never cloned)."""
    return [v if v is not None else a for v, a in zip(values, gen.body_args)]


def _load_operand(gen: Generic, k: int, dims: list) -> ir.Value:
    value = gen.operands[k]
    if not isinstance(value.type, ir.MemRefType):
        return value
    return memref.LoadOp(value, _apply_map(gen.maps[k], dims)).result


def _innermost_dim(amap: ir.AffineMap):
    results = list(amap.results)
    if not results or not isinstance(results[-1], ir.AffineDimExpr):
        return None
    return ir.AffineDimExpr(results[-1]).position


def _binary(name: str, a: ir.Value, b: ir.Value) -> ir.Value:
    return ir.Operation.create(name, results=[a.type], operands=[a, b]).results[0]


def _combine(name: str, a: ir.Value, b: ir.Value) -> ir.Value:
    return _binary(name, a, b)


def _clone_unary(op: ir.Operation, value: ir.Value) -> ir.Value:
    new = op.clone(ip=ir.InsertionPoint.current)
    new.operands[0] = value
    return new.results[0]


def _defining(v: ir.Value):
    owner = v.owner
    if isinstance(owner, (ir.Operation, ir.OpView)):
        return _op(owner)
    return None


def _match_reduction(gen: Generic):
    """Combiner op names, one per output, when every yielded value is
    ``combine(out_arg, e)`` with ``e`` independent of the output args and
    the output arg used only there; else None."""
    n_in = len(gen.inputs)
    out_args = gen.body_args[n_in:]
    yielded = list(gen.terminator().operands)
    if len(yielded) != len(out_args):
        return None
    names = []
    for j, (y, arg) in enumerate(zip(yielded, out_args)):
        op = _defining(y)
        if op is None or op.name not in COMBINERS or op.block != gen.block:
            return None
        ops = list(op.operands)
        if ops[0] == arg:
            other = ops[1]
        elif ops[1] == arg:
            other = ops[0]
        else:
            return None
        uses = [u for u in arg.uses]
        if len(uses) != 1:
            return None
        if _depends_on(other, set(out_args), gen.block):
            return None
        if not gen.outputs[j].type.element_type == y.type:
            return None
        names.append(op.name)
    return names


def _depends_on(v: ir.Value, args: set, block: ir.Block, seen=None) -> bool:
    if v in args:
        return True
    op = _defining(v)
    if op is None:
        return False
    seen = set() if seen is None else seen
    if op in seen:
        return False
    seen.add(op)
    if any(_depends_on(o, args, block, seen) for o in op.operands):
        return True
    for region in op.regions:
        for b in region.blocks:
            for inner in b.operations:
                if any(_depends_on(o, args, block, seen) for o in _op(inner).operands):
                    return True
    return False


def _match_gemm(gen: Generic):
    """``C[b,m,n] += A[b,m,k] * B[b,k,n]`` (any operand layouts, optional
    casts of A and B): dims and ops, or None."""
    if len(gen.inputs) != 2 or len(gen.outputs) != 1 or len(gen.reduction) != 1:
        return None
    if not all(isinstance(v.type, ir.MemRefType) for v in gen.operands):
        return None
    dims_of = []
    for amap in gen.maps:
        if amap.n_symbols or not all(isinstance(e, ir.AffineDimExpr) for e in amap.results):
            return None
        dims_of.append({ir.AffineDimExpr(e).position for e in amap.results})
    sa, sb, sc = dims_of
    k = gen.reduction[0]
    if k not in sa or k not in sb or k in sc:
        return None
    batch = sorted(sa & sb & sc)
    ms = sorted((sa & sc) - sb)
    ns = sorted((sb & sc) - sa)
    if len(ms) != 1 or len(ns) != 1 or set(batch + ms + ns) != set(gen.parallel):
        return None
    if len(gen.maps[2].results) != len(sc):
        return None
    # body: yield add(c, mul(cast?(a), cast?(b)))
    ops = [_op(o) for o in gen.block.operations]
    a_arg, b_arg, c_arg = gen.body_args
    y = list(gen.terminator().operands)
    if len(y) != 1:
        return None
    add = _defining(y[0])
    if add is None or add.name not in ("arith.addf", "arith.addi"):
        return None
    x, z = list(add.operands)
    if z == c_arg:
        x, z = z, x
    if x != c_arg:
        return None
    mul = _defining(z)
    if mul is None or mul.name != ("arith.mulf" if add.name == "arith.addf" else "arith.muli"):
        return None
    casts = {}
    for v in mul.operands:
        src, cast = v, None
        op = _defining(v)
        if op is not None and op.name in _CASTS:
            src, cast = op.operands[0], op
        if src == a_arg and "a" not in casts:
            casts["a"] = cast
        elif src == b_arg and "b" not in casts:
            casts["b"] = cast
        else:
            return None
    if len(ops) - 1 != 2 + sum(c is not None for c in casts.values()):
        return None
    return {"m": ms[0], "n": ns[0], "k": k, "batch": batch, "mul": mul.name,
            "add": add.name, "a_cast": casts["a"], "b_cast": casts["b"]}


def _erase_dead_host_scalars(module: ir.Operation) -> None:
    """Host ``memref.load``s (and scalar ops on them) whose uses were all
    sunk into kernels."""
    changed = True
    while changed:
        changed = False
        for fn in host_functions(module):
            for op in reversed(list(walk(fn, into_kernels=False))):
                if _reads_device_scalar(op) and not any(list(r.uses) for r in op.results):
                    op.erase()
                    changed = True
