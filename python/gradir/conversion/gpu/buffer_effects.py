"""What a host op does to device buffers, for gpu-fuse-generics: the region
of a buffer a memref value may touch (``region_of``: the allocation it
views and, for static views, the range of element offsets), and the reads
and writes of an op (``effects_of``), so that two ops can be proven apart.
Function arguments may alias each other unless marked ``llvm.noalias``;
anything not proven apart conflicts."""

from __future__ import annotations

from dataclasses import dataclass, field

from mlir import ir

from ... import _compat
from .common import ALLOC_OPS, VIEW_OPS
from .kernels.common import as_op

__all__ = ["Effects", "Region", "captured_values", "effects_of", "nested_ops", "owner_op",
           "region_of", "same_view"]

_ALLOCS = ALLOC_OPS | {"gpu.alloc"}
# Views whose result type does not tell where its elements lie in the buffer.
_OPAQUE_VIEWS = frozenset({"memref.view", "memref.reshape"})


def owner_op(v: ir.Value):
    owner = v.owner
    if isinstance(owner, (ir.Operation, ir.OpView)):
        return as_op(owner)
    return None


@dataclass(frozen=True)
class Region:
    """The elements a memref value may touch: its buffer (``key``; ``kind``
    alloc, global, arg or other) and, when known, the range of linear
    element offsets in it."""
    key: object
    kind: str
    lo: int | None = None
    hi: int | None = None

    def overlaps(self, other: "Region") -> bool:
        if self.key != other.key:
            if "other" in (self.kind, other.kind):
                return True
            if self.kind == "alloc" or other.kind == "alloc":
                return False
            return not (self.kind == other.kind == "global")
        if self.lo is None or other.lo is None:
            return True
        return self.lo <= other.hi and other.lo <= self.hi


def _root(v: ir.Value):
    """The memref ``v`` views (through view ops) and whether every view on
    the way keeps the element positions readable from its type."""
    exact = True
    while True:
        op = owner_op(v)
        if op is None or op.name not in VIEW_OPS:
            return v, op, exact
        if op.name in _OPAQUE_VIEWS:
            exact = False
        v = op.operands[0]


def _linear_range(t: ir.MemRefType):
    if not t.has_static_shape:
        return None
    try:
        strides, offset = t.get_strides_and_offset()
    except Exception:   # noqa: BLE001 -- a layout without strides
        return None
    dyn = ir.ShapedType.get_dynamic_stride_or_offset()
    if offset == dyn or any(s == dyn for s in strides):
        return None
    if any(d == 0 for d in t.shape):
        return offset, offset - 1
    lo = hi = offset
    for d, s in zip(t.shape, strides):
        if s >= 0:
            hi += (d - 1) * s
        else:
            lo += (d - 1) * s
    return lo, hi


def _identity_layout(t: ir.MemRefType) -> bool:
    rng = _linear_range(t)
    if rng is None or rng[0] != 0:
        return False
    strides, _ = t.get_strides_and_offset()
    expect = 1
    for d, s in reversed(list(zip(t.shape, strides))):
        if d != 1 and s != expect:
            return False
        expect *= d
    return True


def region_of(v: ir.Value) -> Region:
    root, op, exact = _root(v)
    if op is not None and op.name in _ALLOCS:
        key, kind = root, "alloc"
    elif op is not None and op.name == "memref.get_global":
        key, kind = ("global", str(op.attributes["name"])), "global"
    elif op is None and _is_function_argument(root):
        key, kind = root, "alloc" if _noalias(root) else "arg"
    else:
        return Region(root, "other")
    if not exact or not isinstance(v.type, ir.MemRefType):
        return Region(key, kind)
    rt, vt = ir.MemRefType(root.type), ir.MemRefType(v.type)
    if rt.element_type != vt.element_type or not _identity_layout(rt):
        return Region(key, kind)
    rng = _linear_range(vt)
    if rng is None:
        return Region(key, kind)
    return Region(key, kind, rng[0], rng[1])


def _is_function_argument(v: ir.Value) -> bool:
    block = v.owner
    parent = block.owner
    return parent is not None and as_op(parent).name == "func.func"


def _noalias(arg: ir.Value) -> bool:
    """A function argument marked ``llvm.noalias``: a buffer of its own."""
    fn = as_op(arg.owner.owner)
    if "arg_attrs" not in fn.attributes:
        return False
    attrs = ir.ArrayAttr(fn.attributes["arg_attrs"])[ir.BlockArgument(arg).arg_number]
    return "llvm.noalias" in ir.DictAttr(attrs)


def same_view(a: ir.Value, b: ir.Value) -> bool:
    """``a`` and ``b`` put each index on the same element."""
    if a == b:
        return True
    ra, rb = region_of(a), region_of(b)
    return (ra.key == rb.key and ra.kind != "other" and ra.lo is not None
            and rb.lo is not None and a.type == b.type)


# --- memory effects of host ops ------------------------------------------------------

@dataclass
class Effects:
    """What an op reads and writes (``barrier``: anything)."""
    reads: list = field(default_factory=list)
    writes: list = field(default_factory=list)
    barrier: bool = False

    def conflicts(self, other: "Effects") -> bool:
        if self.barrier or other.barrier:
            return True
        for w in self.writes:
            if any(w.overlaps(r) for r in other.reads + other.writes):
                return True
        for w in other.writes:
            if any(w.overlaps(r) for r in self.reads):
                return True
        return False

    def touches(self, region: Region) -> bool:
        return self.barrier or any(region.overlaps(r) for r in self.reads + self.writes)


def _inside(v: ir.Value, op: ir.Operation) -> bool:
    """Whether ``v`` is defined in ``op``'s regions."""
    owner = v.owner
    cur = as_op(owner) if isinstance(owner, (ir.Operation, ir.OpView)) else \
        as_op(owner.owner) if owner.owner is not None else None
    if isinstance(owner, (ir.Operation, ir.OpView)):
        cur = _compat.parent_op(cur)
    while cur is not None:
        if cur == op:
            return True
        cur = _compat.parent_op(cur)
    return False


def nested_ops(op: ir.Operation):
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                inner = as_op(inner)
                yield inner
                yield from nested_ops(inner)


def captured_values(op: ir.Operation):
    """(user, value) for the memrefs defined outside ``op`` that ops nested
    in it use."""
    out = []
    for inner in nested_ops(op):
        for v in inner.operands:
            if isinstance(v.type, ir.MemRefType) and not _inside(v, op):
                out.append((inner, v))
    return out


def effects_of(op: ir.Operation) -> Effects:
    name = op.name
    eff = Effects()
    mems = [v for v in op.operands if isinstance(v.type, ir.MemRefType)]
    if name in _ALLOCS or name in VIEW_OPS:
        return eff
    if "call" in name:
        eff.barrier = True
        return eff
    if name == "linalg.generic":
        sizes = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
        ops = list(op.operands)
        eff.reads = [region_of(v) for v in ops[:sizes[0]] if isinstance(v.type, ir.MemRefType)]
        eff.writes = [region_of(v) for v in ops[sizes[0]:sizes[0] + sizes[1]]]
        eff.reads += eff.writes
    elif name in ("gpu.memcpy", "memref.copy"):
        dst, src = (mems[0], mems[1]) if name == "gpu.memcpy" else (mems[1], mems[0])
        eff.reads, eff.writes = [region_of(src)], [region_of(dst)]
    elif name in ("memref.load", "func.return"):
        eff.reads = [region_of(v) for v in mems]
    else:
        eff.writes = [region_of(v) for v in mems]
    for user, v in captured_values(op):
        if "call" in user.name:
            eff.barrier = True
        elif user.name == "memref.load":
            eff.reads.append(region_of(v))
        else:
            eff.writes.append(region_of(v))
    return eff
