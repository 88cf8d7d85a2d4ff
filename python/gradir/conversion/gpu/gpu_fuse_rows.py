"""gpu-fuse-rows: chains of row reductions and row-wise elementwise generics
(softmax, layer norm, batch-norm statistics and their gradients) as one
kernel, a block per row."""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlir import ir

from ...ir import symbol_name
from ...passes.base import ModulePass
from ... import _compat
from .common import ALLOC_OPS, VIEW_OPS, aliases_of, host_functions
from .kernels.common import Generic, GenericError, Namer, as_op, reads_device_scalar
from .kernels.gemm import match_gemm
from .kernels.reduction import match_reduction
from .kernels.rows import (WORKGROUP_BYTES, RowAccess, RowMember, RowPlan, build_rows,
                           workgroup_bytes)

__all__ = ["GpuFuseRows"]

# Threads per block of the row kernels (gpu-linalg-to-kernels' default).
BLOCK_SIZE = 256
# Host ops a chain may step over: they neither read nor write device memory
# (deallocations move after the kernel).
_SKIPPABLE = ALLOC_OPS | VIEW_OPS | {"gpu.alloc", "gpu.dealloc", "memref.dealloc",
                                     "arith.constant"}


@dataclass(frozen=True)
class GpuFuseRows(ModulePass):
    """Builds each chain of row reductions and the row-wise generics around
    them as one ``gpu.launch`` (a block per row).

    A chain is a run of ``linalg.generic``s on device buffers (in program
    order; allocations, views and deallocations between them allowed) that
    all iterate over the same rows R times the same inner space I (unit
    dims aside), each either a reduction over I (its outputs indexed by the
    rows), an elementwise generic over R x I or one over R only; at least
    one reduction, no contraction (those stay GEMMs).  Buffers the chain
    writes are accessed in one way only: per row (then read from registers
    after the write) or at the point the thread iterates (then read back by
    the thread that wrote it).  The innermost loop dim is in I (coalesced
    loads).  Anything else is left to gpu-linalg-to-kernels.

    The kernel: ``by`` rows per block (thread y), ``bx`` threads striding over
    I (thread x) in the same order in every phase (up to 1024 when there are
    fewer rows than multiprocessors and they are long); reductions combine
    per-thread partials in a tree in workgroup memory (at most 48 KiB a
    chain) and broadcast the total; per-row results are stored by thread x 0
    at the end, except in device buffers nothing but the chain uses.  A
    total (one row) is a chain only when short (4 x 256), and only from
    generics no chain over several rows took."""

    name = "gpu-fuse-rows"
    block_size = BLOCK_SIZE

    def apply(self, module: ir.Operation) -> None:
        taken = {symbol_name(o) for o in module.regions[0].blocks[0].operations
                 if "sym_name" in o.attributes}
        for fn in host_functions(module):
            namer = Namer(symbol_name(fn), set(taken))
            for block in _blocks(fn):
                for group in _chains(block, self.block_size):
                    self._fuse(group, namer)

    def _fuse(self, group: "_Group", namer: Namer) -> None:
        ops = [m.gen.op for m in group.plan.members]
        first, last = ops[0], ops[-1]
        between = _between(first, last)
        group.plan.local = _local_roots(group.plan)
        with ir.InsertionPoint(last), last.location:
            launch = build_rows(group.plan, self.block_size, namer("rows"))
        after = as_op(launch)
        for op in between:
            if op.name in ("gpu.dealloc", "memref.dealloc"):
                op.move_after(after)
                after = op
        for op in ops:
            op.erase()


# --- walking ----------------------------------------------------------------------

def _blocks(fn: ir.Operation):
    """Blocks of host code (not inside kernels) holding linalg.generics."""
    out = []

    def visit(op):
        for region in op.regions:
            for block in region.blocks:
                if any(as_op(o).name == "linalg.generic" for o in block.operations):
                    out.append(block)
                for o in block.operations:
                    o = as_op(o)
                    if o.name not in ("gpu.launch", "linalg.generic") and o.regions:
                        visit(o)
    visit(fn)
    return out


def _local_roots(plan: RowPlan) -> frozenset:
    """Per-row buffers the chain writes that only it uses: device
    allocations whose every use (through views) is a member or a
    deallocation."""
    members = {m.gen.op for m in plan.members}
    out = set()
    for m in plan.members:
        for a in m.accesses:
            if a is None or not a.per_row or a.root in out:
                continue
            owner = a.root.owner
            if isinstance(owner, ir.Block) or as_op(owner).name != "gpu.alloc":
                continue
            if all(user in members or user.name in ("gpu.dealloc", "memref.dealloc")
                   or (user.name in VIEW_OPS and k == 0)
                   for alias in aliases_of(a.root) for user, k in _compat.uses_of(alias)):
                out.add(a.root)
    return frozenset(out)


def _between(first: ir.Operation, last: ir.Operation) -> list:
    out, seen = [], False
    for o in first.block.operations:
        o = as_op(o)
        if o == last:
            break
        if seen:
            out.append(o)
        if o == first:
            seen = True
    return out


# --- accesses ---------------------------------------------------------------------

def _root(v: ir.Value):
    """The allocation (or block argument) ``v`` views, or None."""
    while True:
        owner = v.owner
        if isinstance(owner, ir.Block):
            return v
        op = as_op(owner)
        if op.name in VIEW_OPS:
            v = op.operands[0]
            continue
        if op.name in ALLOC_OPS or op.name == "gpu.alloc":
            return v
        return None


class _Access:
    """Where an operand's map points in its root buffer: ``offset + sum of
    coef[d] * d`` (element units) over the loop dims."""

    def __init__(self, root, offset: int, coef: dict):
        self.root, self.offset, self.coef = root, offset, coef

    def key(self, rows, inner) -> tuple:
        """(offset, row strides, inner strides); no inner strides when
        they are all 0 (a per-row access)."""
        ik = tuple(self.coef.get(d, 0) for d in inner)
        return (self.offset, tuple(self.coef.get(d, 0) for d in rows), ik if any(ik) else ())


def _access(gen: Generic, k: int):
    """The ``_Access`` of operand ``k``, None for a non-memref, False when
    unsupported (maps other than dims and constants, dynamic layouts,
    unknown buffers)."""
    value = gen.operands[k]
    if not isinstance(value.type, ir.MemRefType):
        return None
    root = _root(value)
    if root is None:
        return False
    try:
        strides, offset = ir.MemRefType(value.type).get_strides_and_offset()
    except Exception:  # noqa: BLE001
        return False
    if any(s < 0 or s > (1 << 62) for s in strides) or offset < 0 or offset > (1 << 62):
        return False   # dynamic
    amap = gen.maps[k]
    if amap.n_symbols:
        return False
    coef: dict = {}
    for expr, stride in zip(amap.results, strides):
        if isinstance(expr, ir.AffineDimExpr):
            d = ir.AffineDimExpr(expr).position
            if gen.ranges[d] != 1:
                coef[d] = coef.get(d, 0) + stride
        elif isinstance(expr, ir.AffineConstantExpr):
            offset += ir.AffineConstantExpr(expr).value * stride
        else:
            return False
    return _Access(root, offset, {d: c for d, c in coef.items() if c})


def _nonunit(gen: Generic) -> list:
    return [d for d, r in enumerate(gen.ranges) if r != 1]


class _Candidate:
    """A generic that may join a chain: its ``Generic``, combiners (when a
    row reduction) and operand accesses."""

    def __init__(self, op: ir.Operation):
        self.op = op
        self.gen = Generic(op)
        gen = self.gen
        self.accesses = [_access(gen, k) for k in range(len(gen.operands))]
        self.ok = all(a is not False for a in self.accesses) and not _opaque(gen)
        self.host_reads = _host_reads(gen)
        if self.host_reads is None:
            self.ok = False
        self.combiners = None
        if gen.reduction:
            c = match_reduction(gen) if match_gemm(gen) is None else None
            if c is None:
                self.ok = False
            self.combiners = c

    def own_partition(self):
        """The rows and inner dims of a row reduction by itself: the rows in
        the order of its first output's indices, the reduced dims in loop order."""
        gen = self.gen
        n_in = len(gen.inputs)
        rows = []
        for expr in gen.maps[n_in].results:
            if isinstance(expr, ir.AffineDimExpr):
                d = ir.AffineDimExpr(expr).position
                if gen.ranges[d] != 1 and d not in rows:
                    rows.append(d)
        if sorted(rows) != [d for d in gen.parallel if gen.ranges[d] != 1]:
            return None
        inner = [d for d in gen.reduction if gen.ranges[d] != 1]
        return rows, inner

    def member(self, rows, inner) -> RowMember:
        accs = [None if a is None else RowAccess(a.root, a.key(rows, inner))
                for a in self.accesses]
        return RowMember(self.gen, list(rows), list(inner), self.combiners, accs,
                         self.host_reads)


def _opaque(gen: Generic) -> bool:
    """Whether the body touches memory itself (gathers) or has regions."""
    for o in gen.block.operations:
        o = as_op(o)
        if o.regions or any(isinstance(v.type, ir.MemRefType) for v in o.operands):
            return True
    return False


def _host_reads(gen: Generic):
    """The buffers of the host scalars (``memref.load`` on the host, and
    scalar ops on them) the body uses, which the kernel loads itself; None
    when one is not a known buffer."""
    out = set()
    seen = set()
    todo = [v for o in gen.block.operations for v in as_op(o).operands]
    while todo:
        v = todo.pop()
        owner = v.owner
        if not isinstance(owner, (ir.Operation, ir.OpView)):
            continue
        op = as_op(owner)
        if op in seen or not reads_device_scalar(op):
            continue
        seen.add(op)
        if op.name == "memref.load":
            root = _root(op.operands[0])
            if root is None:
                return None
            out.add(root)
        todo.extend(op.operands)
    return frozenset(out)


# --- chains -----------------------------------------------------------------------

@dataclass
class _Group:
    plan: RowPlan


def _chains(block: ir.Block, block_size: int) -> list:
    """The chains of ``block``, in program order, disjoint.  Chains over
    several rows first; then totals (one row) small enough for one block,
    from what is left."""
    items = []   # ("gen", _Candidate) | ("skip", op) | ("stop", op)
    for o in block.operations:
        o = as_op(o)
        if o.name == "linalg.generic":
            try:
                items.append(("gen", _Candidate(o)))
            except GenericError:
                items.append(("stop", o))
        elif o.name in _SKIPPABLE or (o.name.startswith("arith.") and not o.regions
                                      and o.name != "arith.constant" and _pure_scalar(o)):
            items.append(("skip", o))
        else:
            items.append(("stop", o))
    gens = [i for i, (kind, _) in enumerate(items) if kind == "gen"]
    # neighbours[i]: the previous/next generic item index with only skippable ops between
    prev_of, next_of = {}, {}
    for a, b in zip(gens, gens[1:]):
        if all(items[j][0] == "skip" for j in range(a + 1, b)):
            next_of[a], prev_of[b] = b, a
    used: set = set()
    out = []
    for i, total in [(i, False) for i in gens] + [(i, True) for i in gens]:
        cand = items[i][1]
        if i in used or not cand.ok or cand.combiners is None:
            continue
        part = cand.own_partition()
        if part is None or not part[1]:
            continue
        rows, inner = part
        R = tuple(cand.gen.ranges[d] for d in rows)
        I = tuple(cand.gen.ranges[d] for d in inner)
        if (math.prod(R) == 1) != total or not _worthwhile(R, I, block_size):
            continue
        chain = [(i, cand.member(rows, inner))]
        if _validate([m for _, m in chain]) is False:
            continue
        # forwards, then backwards
        j = i
        while j in next_of and next_of[j] not in used:
            m = _join(items[next_of[j]][1], [m for _, m in chain], R, I, at_end=True)
            if m is None:
                break
            j = next_of[j]
            chain.append((j, m))
        j = i
        while j in prev_of and prev_of[j] not in used:
            m = _join(items[prev_of[j]][1], [m for _, m in chain], R, I, at_end=False)
            if m is None:
                break
            j = prev_of[j]
            chain.insert(0, (j, m))
        members = [m for _, m in chain]
        if len(members) < 2 or workgroup_bytes(RowPlan(members, R, I),
                                                block_size) > WORKGROUP_BYTES:
            continue
        used.update(k for k, _ in chain)
        out.append((chain[0][0], chain[-1][0], RowPlan(members, R, I)))
    out.sort(key=lambda c: c[0])
    return [_Group(plan) for _, _, plan in _merge(out, next_of, block_size)]


def _merge(chains: list, next_of: dict, block_size: int) -> list:
    """Adjacent chains over the same rows and inner space merged when the
    result is still one kernel (a member that shares no buffer with the
    chain before it starts a chain of its own)."""
    out = []
    for first, last, plan in chains:
        if out:
            pfirst, plast, prev = out[-1]
            merged = RowPlan(prev.members + plan.members, plan.R, plan.I)
            if next_of.get(plast) == first and (prev.R, prev.I) == (plan.R, plan.I) \
                    and _validate(merged.members) is not False \
                    and workgroup_bytes(merged, block_size) <= WORKGROUP_BYTES:
                out[-1] = (pfirst, last, merged)
                continue
        out.append((first, last, plan))
    return out


def _pure_scalar(op: ir.Operation) -> bool:
    return all(not isinstance(v.type, (ir.MemRefType,)) for v in op.operands)


def _worthwhile(R: tuple, I: tuple, block_size: int) -> bool:
    """A total (one row) runs in one block: only when it is short (longer
    ones are left to the split reductions of gpu-linalg-to-kernels)."""
    itot = math.prod(I)
    return itot > 0 and (math.prod(R) > 1 or itot <= 4 * block_size)


def _join(cand: _Candidate, members: list, R: tuple, I: tuple, at_end: bool):
    """``cand`` as a member of the chain ``members`` (appended or
    prepended), or None."""
    if not cand.ok:
        return None
    keys: dict = {}
    for m in members:
        for a in m.accesses:
            if a is not None:
                keys.setdefault(a.root, set()).add(a.key)
    tried = set()
    for a in cand.accesses:
        if not a or a.root not in keys:
            continue
        for key in keys[a.root]:
            part = _match(cand.gen, a, key, R, I)
            if part is None or part in tried:
                continue
            tried.add(part)
            rows, inner = part
            if cand.combiners is not None:
                nonunit = set(_nonunit(cand.gen))
                if set(rows) != nonunit & set(cand.gen.parallel) or not inner \
                        or set(inner) != nonunit & set(cand.gen.reduction):
                    continue
            m = cand.member(list(rows), list(inner))
            chain = members + [m] if at_end else [m] + members
            if _validate(chain) is not False:
                return m
    return None


def _match(gen: Generic, acc: _Access, key: tuple, R: tuple, I: tuple):
    """Rows and inner dims of ``gen`` (tuples in canonical order) under which
    ``acc`` has ``key``, or None."""
    offset, rk, ik = key
    if acc.offset != offset:
        return None
    ik = ik or (0,) * len(I)
    slots = [(e, c) for e, c in zip(R, rk)] + [(e, c) for e, c in zip(I, ik)]
    taken: dict = {}
    unassigned = []
    for d in _nonunit(gen):
        c = acc.coef.get(d, 0)
        if c == 0:
            unassigned.append(d)
            continue
        cands = [q for q, (e, cc) in enumerate(slots)
                 if cc == c and e == gen.ranges[d] and q not in taken]
        if len(cands) != 1:
            return None
        taken[cands[0]] = d
    if any(c != 0 and q not in taken for q, (_, c) in enumerate(slots)):
        return None
    free = [q for q in range(len(slots)) if q not in taken]
    nr = len(R)
    if len(unassigned) == len(free):
        for q, d in zip(free, unassigned):
            if slots[q][0] != gen.ranges[d]:
                return None
            taken[q] = d
        return tuple(taken[q] for q in range(nr)), tuple(taken[q] for q in range(nr, len(slots)))
    # over the rows only
    if unassigned or any(q in taken for q in range(nr, len(slots))) \
            or any(q not in taken for q in range(nr)):
        return None
    return tuple(taken[q] for q in range(nr)), ()


def _validate(members: list):
    """False when the chain cannot be one kernel: a member not row-shaped, a
    written buffer accessed in more than one way, or stores racing."""
    per_root: dict = {}
    for m in members:
        gen = m.gen
        if any(gen.iterators[d] != "parallel" for d in m.rows):
            return False
        if m.combiners is None and any(gen.iterators[d] != "parallel" for d in m.inner):
            return False
        covered = set(m.rows) | set(m.inner)
        if any(d not in covered for d in _nonunit(gen)):
            return False
        # coalescing: the innermost non-unit loop dim iterates over I
        nonunit = _nonunit(gen)
        if m.inner and nonunit and nonunit[-1] not in m.inner:
            return False
        n_in = len(gen.inputs)
        for k, a in enumerate(m.accesses):
            if a is None:
                continue
            write = k >= n_in
            read = (k < n_in and gen.used(k)) or (write and (
                gen.used(k) if m.combiners is None else not gen.zero_init))
            if write:
                coefs = a.key[1] + (() if (m.row_only or m.combiners) else a.key[2])
                if any(c == 0 for c in coefs) or (m.combiners is not None or m.row_only) \
                        and not a.per_row:
                    return False
                if not m.row_only and m.combiners is None and a.per_row:
                    return False
            lst = per_root.setdefault(a.root, [])
            if write:
                lst.append((a.key, True))
            if read:
                lst.append((a.key, False))
    for root, lst in per_root.items():
        if any(w for _, w in lst) and (len({k for k, _ in lst}) != 1 or any(
                root in m.host_reads for m in members)):
            return False
    return True
