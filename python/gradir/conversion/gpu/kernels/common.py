"""What every kernel strategy of gpu-linalg-to-kernels shares: the view of a
``linalg.generic`` (``Generic``), the options and naming of kernels
(``KernelContext``), small IR builders (launches, index arithmetic, constants)
and the cloner that copies a generic's body into a kernel."""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import affine, arith, gpu, memref, scf

from .... import _compat
from ..common import HOST_MEMORY, index
from ..gpu_fold_zero_init import ZERO_INIT

__all__ = ["PARALLEL", "REDUCTION", "Generic", "GenericError", "KernelOptions", "KernelContext",
           "Namer", "Cloner", "as_op", "const", "apply_map", "delinearize", "ult", "if_",
           "pow2_ceil", "launch", "workgroup_type", "binary", "clone_unary", "defining",
           "load_operand", "fill_unused", "reads_device_scalar", "outputs_of", "PaddedInput",
           "read_input", "all_of"]

PARALLEL, REDUCTION = "parallel", "reduction"
WORKGROUP = "#gpu.address_space<workgroup>"


def as_op(x):
    return x.operation if hasattr(x, "operation") else x


def _iterator_kind(attr: ir.Attribute) -> str:
    return REDUCTION if "reduction" in str(attr) else PARALLEL


def outputs_of(op: ir.Operation) -> list:
    """The ``outs`` operands of a ``linalg.generic``."""
    sizes = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    return list(op.operands)[sizes[0]:sizes[0] + sizes[1]]


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
        # input number -> PaddedInput: read from its source, zero in the padding
        self.padded: dict = {}

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
        return as_op(list(self.block.operations)[-1])

    def used(self, k: int) -> bool:
        return len(list(self.body_args[k].uses)) > 0

    def dims(self, parallel=(), reduction=()) -> list:
        """Loop coordinates (None where not given) from the parallel and
        reduction coordinates, each in loop order."""
        out: list = [None] * len(self.ranges)
        for d, v in zip(self.parallel, parallel):
            out[d] = v
        for d, v in zip(self.reduction, reduction):
            out[d] = v
        return out


# --- options and names ----------------------------------------------------------

@dataclass(frozen=True)
class KernelOptions:
    """The options of gpu-linalg-to-kernels the kernel builders read."""
    block_size: int = 256
    sm_count: int = 132
    tiled: bool = True
    split: bool = True
    gemm_min_blocks: int = 2
    tensor_cores: bool = False    # mma.sync GEMMs (the target is sm_80 or later)
    precision: str = "fp32"       # f32 GEMMs: "fp32" (SIMT FMAs) or "tf32" (tensor cores)
    compute_dtype: str = "none"   # "bf16": f32 GEMM operands rounded to bf16 (autocast)


class Namer:
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


@dataclass
class KernelContext:
    """The options and the kernel namer of the host function being lowered."""
    options: KernelOptions
    namer: Namer

    def split_count(self, blocks: int, units: int, min_units: int) -> int:
        """How many ways to split a reduction of ``units`` (at least
        ``min_units`` each) so that ``blocks`` times that fills the GPU."""
        sm = self.options.sm_count
        if not self.options.split or blocks >= sm or units < 2 * min_units:
            return 1
        return max(1, min(-(-2 * sm // blocks), units // min_units))

    def zero_fill(self, out: ir.Value) -> None:
        """A kernel storing zero in every element of ``out`` (before split
        kernels accumulate into it atomically)."""
        shape = list(out.type.shape)
        total = math.prod(shape)
        threads = min(self.options.block_size, max(total, 1))
        blocks = -(-total // threads)
        _, body, ids, _ = launch([blocks], [threads], name=self.namer("zero"))
        with ir.InsertionPoint(body):
            gid = arith.addi(arith.muli(ids[0], index(threads)), ids[3])
            guard = if_(ult(gid, total))
            with ir.InsertionPoint(guard.then_block):
                memref.StoreOp(const(out.type.element_type, 0), out, delinearize(gid, shape))
                scf.YieldOp([])
            gpu.TerminatorOp()


# --- IR building helpers ------------------------------------------------------

def const(t: ir.Type, value) -> ir.Value:
    """A constant of type ``t``; ``"smin"``/``"smax"`` are the extremes of a
    signed integer type, ``-1`` of ``i1`` is true."""
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


def apply_map(amap: ir.AffineMap, dims: list[ir.Value]) -> list[ir.Value]:
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


def delinearize(linear: ir.Value, ranges: list[int]) -> list[ir.Value]:
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


def ult(a: ir.Value, b) -> ir.Value:
    b = b if isinstance(b, ir.Value) else index(b)
    return arith.cmpi(arith.CmpIPredicate.ult, a, b)


def if_(cond: ir.Value, result_types=()):
    return scf.IfOp(cond, list(result_types), has_else=bool(result_types))


def pow2_ceil(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def launch(grid, block, workgroup_types=(), name=None, dynamic_smem: int = 0):
    """A ``gpu.launch`` with its body block; returns (op, block, ids,
    workgroup buffers) where ids = (bx, by, bz, tx, ty, tz).  ``name`` =
    (module, function) names the kernel after outlining.  ``dynamic_smem``
    > 0: the launch's ``dynamic_shared_memory_size`` (bytes per block,
    which the body reads with ``gpu.dynamic_shared_memory``)."""
    g = [index(x) for x in list(grid) + [1] * (3 - len(grid))]
    b = [index(x) for x in list(block) + [1] * (3 - len(block))]
    op, body = _compat.gpu_launch(g, b, list(workgroup_types), dynamic_smem)
    if name is not None:
        op.attributes["module"] = ir.FlatSymbolRefAttr.get(name[0])
        op.attributes["function"] = ir.FlatSymbolRefAttr.get(name[1])
    args = list(body.arguments)
    return op, body, args[:6], args[12:]


def workgroup_type(shape, elt) -> ir.Type:
    return ir.MemRefType.get(list(shape), elt, memory_space=ir.Attribute.parse(WORKGROUP))


def binary(name: str, a: ir.Value, b: ir.Value) -> ir.Value:
    """``name(a, b)`` for a binary arith op name (``"arith.addf"``)."""
    return ir.Operation.create(name, results=[a.type], operands=[a, b]).results[0]


def clone_unary(op: ir.Operation, value: ir.Value) -> ir.Value:
    new = op.clone(ip=ir.InsertionPoint.current)
    new.operands[0] = value
    return new.results[0]


def defining(v: ir.Value):
    owner = v.owner
    if isinstance(owner, (ir.Operation, ir.OpView)):
        return as_op(owner)
    return None


def fill_unused(gen: Generic, values: list) -> list:
    """Block arguments without uses map to themselves (never cloned)."""
    return [v if v is not None else a for v, a in zip(values, gen.body_args)]


def load_operand(gen: Generic, k: int, dims: list) -> ir.Value:
    value = gen.operands[k]
    if not isinstance(value.type, ir.MemRefType):
        return value
    return memref.LoadOp(value, apply_map(gen.maps[k], dims)).result


@dataclass(frozen=True)
class PaddedInput:
    """An input of a GEMM generic that is a zero-filled buffer with
    ``source`` copied into its subview at ``offsets`` (``sizes``,
    ``strides``): a padded (or zero-inserted) convolution input.  The
    kernel reads ``source`` itself, zero where the subview does not reach
    (``read_input``); gpu-linalg-to-kernels drops the fill and the copy."""
    source: ir.Value
    offsets: tuple
    sizes: tuple
    strides: tuple


def read_input(gen: Generic, k: int, dims: list) -> tuple:
    """``(value, ok)``: input ``k`` at the loop coordinates ``dims``; for a
    padded input (``gen.padded``) the element of its source, with ``ok``
    the i1 that is false in the padding (the caller selects zero there),
    else ``ok`` is None.  Per padded dim ``p`` (offset ``o``, size ``z``,
    stride ``s``): ``q = p - o``, inside when ``q <u (z-1)*s + 1`` (one
    unsigned compare: ``p < o`` wraps) and ``q % s == 0``; the source is
    read at ``q / s`` (0 outside, so the load stays in bounds).  A check
    the map's range cannot fail is left out."""
    idx = apply_map(gen.maps[k], dims)
    pad = gen.padded.get(k)
    if pad is None:
        return memref.LoadOp(gen.inputs[k], idx).result, None
    conds, src_idx = [], []
    exprs = list(gen.maps[k].results)
    for p, e, o, z, s in zip(idx, exprs, pad.offsets, pad.sizes, pad.strides):
        lo, hi = _expr_range(e, gen.ranges) or (-1, 1 << 62)
        last = o + (z - 1) * s
        q = arith.subi(p, index(o)) if o else p
        ok = ult(q, (z - 1) * s + 1) if lo < o or hi > last else None
        if s > 1:
            on = arith.cmpi(arith.CmpIPredicate.eq, arith.remui(q, index(s)), index(0))
            ok = on if ok is None else arith.andi(ok, on)
        if ok is not None:
            q = arith.select(ok, q, index(0))
            conds.append(ok)
        src_idx.append(arith.divui(q, index(s)) if s > 1 else q)
    return memref.LoadOp(pad.source, src_idx).result, all_of(conds) if conds else None


def all_of(conds: list) -> ir.Value:
    """The conjunction of one or more i1 values."""
    out = conds[0]
    for c in conds[1:]:
        out = arith.andi(out, c)
    return out


def _expr_range(expr, ranges: list):
    """``(min, max)`` of an affine expression (dims, constants, sums,
    products by constants) over the loop ranges, or None."""
    if isinstance(expr, ir.AffineDimExpr):
        return 0, ranges[ir.AffineDimExpr(expr).position] - 1
    if isinstance(expr, ir.AffineConstantExpr):
        return expr.value, expr.value
    if isinstance(expr, ir.AffineAddExpr):
        a, b = _expr_range(expr.lhs, ranges), _expr_range(expr.rhs, ranges)
        return None if a is None or b is None else (a[0] + b[0], a[1] + b[1])
    if isinstance(expr, ir.AffineMulExpr):
        lhs, rhs = expr.lhs, expr.rhs
        if isinstance(lhs, ir.AffineConstantExpr):
            lhs, rhs = rhs, lhs
        if not isinstance(rhs, ir.AffineConstantExpr):
            return None
        a = _expr_range(lhs, ranges)
        if a is None:
            return None
        c = rhs.value
        return (a[0] * c, a[1] * c) if c >= 0 else (a[1] * c, a[0] * c)
    return None


# --- cloning bodies ---------------------------------------------------------------

class Cloner:
    """Clones a generic's body ops at the current insertion point with a
    value mapping; values computed on the host from device buffers
    (``memref.load`` and scalar ops on its result) are cloned into the
    kernel too, so the host never reads device memory.  Such a clone goes
    before the cloned body op that first uses it (a body op is cloned
    first and its operands remapped after, so cloning at the insertion
    point would put the scalar after its use)."""

    def __init__(self, mapping=None):
        self.mapping = {}
        self._before = None   # the op sunk scalars go before (None: insertion point)
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
        op = as_op(owner)
        if not reads_device_scalar(op) or _in_kernel(op):
            return None
        operands = [self.value(o) for o in op.operands]   # their clones come first
        ip = ir.InsertionPoint.current if self._before is None else ir.InsertionPoint(self._before)
        new = op.clone(ip=ip)
        for i, o in enumerate(operands):
            new.operands[i] = o
        for old_r, new_r in zip(op.results, new.results):
            self.mapping[old_r] = new_r
        return self.mapping[v]

    def _remap(self, op: ir.Operation) -> None:
        """Remaps the operands of the cloned ``op`` (and of the ops nested in
        it); scalars sunk from the host go before ``op``."""
        outer, self._before = self._before, (self._before or op)
        try:
            for i, operand in enumerate(list(op.operands)):
                mapped = self.value(operand)
                if mapped != operand:
                    op.operands[i] = mapped
            for region in op.regions:
                for block in region.blocks:
                    for inner in block.operations:
                        self._remap(as_op(inner))
        finally:
            self._before = outer

    def clone_ops(self, block: ir.Block, index_values=None) -> list[ir.Value]:
        """Clones ``block``'s ops but its terminator; returns the mapped
        terminator operands.  ``linalg.index d`` maps to index_values[d]."""
        ops = [as_op(o) for o in block.operations]
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

    @classmethod
    def body(cls, gen: Generic, values: list, dims: list) -> list[ir.Value]:
        """``gen``'s body cloned with its block arguments bound to ``values``
        (None: unused); returns the yielded values."""
        return cls(dict(zip(gen.body_args, fill_unused(gen, values)))).clone_ops(gen.block, dims)


def _in_kernel(op: ir.Operation) -> bool:
    """Whether ``op`` is nested in a ``gpu.launch`` (not a host op)."""
    parent = op.parent
    while parent is not None:
        parent = as_op(parent)
        if parent.name == "gpu.launch":
            return True
        if parent.name in ("func.func", "builtin.module"):
            return False
        parent = parent.parent
    return False


def reads_device_scalar(op: ir.Operation) -> bool:
    """Host ops computing a scalar from device memory (to be sunk); a load
    marked ``gradir.host_memory`` reads host memory (its scalar is a kernel
    argument, as any host value)."""
    if op.name == "memref.load":
        return HOST_MEMORY not in op.attributes
    if not op.name.startswith(("arith.", "math.")) or op.name == "arith.constant":
        return False
    for v in op.operands:
        owner = v.owner
        if isinstance(owner, (ir.Operation, ir.OpView)) and reads_device_scalar(as_op(owner)):
            return True
    return False
