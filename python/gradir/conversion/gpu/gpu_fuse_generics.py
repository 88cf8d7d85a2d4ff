"""gpu-fuse-generics: merges linalg.generics on device buffers that can share
one kernel (see the pass's docstring), so that a call launches fewer kernels."""

from __future__ import annotations

from dataclasses import dataclass, field

from mlir import ir

from ... import _compat
from ...passes.base import ModulePass
from .buffer_effects import (Effects, Region, captured_values, effects_of, nested_ops, owner_op,
                             region_of, same_view)
from .common import ALLOC_OPS, VIEW_OPS, host_functions
from .gpu_fold_zero_init import ZERO_INIT
from .kernels import (Generic, GenericError, KernelContext, KernelOptions, gemm_worthwhile,
                      match_gemm, match_reduction)
from .kernels.common import PARALLEL, REDUCTION, as_op
from .kernels.reduction import reduction_splits

__all__ = ["GpuFuseGenerics"]

_ALLOCS = ALLOC_OPS | {"gpu.alloc"}
_FREES = frozenset({"memref.dealloc", "gpu.dealloc"})
# Attributes a fusable generic may carry (anything else: left alone).
_KNOWN_ATTRS = frozenset({"indexing_maps", "iterator_types", "operandSegmentSizes", ZERO_INIT})
# Ops that may be moved up with a generic that uses their result.
_HOISTABLE = VIEW_OPS | {"arith.constant"}


@dataclass(frozen=True)
class GpuFuseGenerics(ModulePass):
    """Merges linalg.generics on device buffers into multi-output generics
    that gpu-linalg-to-kernels builds as one kernel.

    Within each block of a host function, in program order, two generics
    ``A`` then ``B`` merge (at ``B``'s place, or at ``A``'s when ``B`` can
    move up there) when they have the same loop ranges (up to a
    permutation of the loop dimensions) and
    * both are all-parallel: ``B`` reads what ``A`` writes only at the same
      point (same buffer view, same index as a function of the shared loop
      dimensions; the merged body uses ``A``'s yielded value), or not at
      all (independent generics, e.g. the gradients of a backward pass);
    * both are reductions (block reductions with a known combiner, not
      contractions) with the same iterator types and no dependence between
      them: one reduction with several outputs;
    * ``A`` is all-parallel, ``B`` a reduction over the same iteration space
      that reads ``A``'s outputs at the same point, and nothing reads them
      after ``B``: ``A``'s body moves into the reduction.
    No op between them may touch, in a conflicting way, the buffers the
    moved generic reads or writes.  Buffers are compared by the allocation
    they view (static subviews by the element ranges they cover); anything
    not proven apart counts as a conflict.

    An output of ``A`` that nothing reads any more (rewritten or freed
    before any read, or overwritten by ``B`` at the same point) leaves the
    merged generic; a local buffer left without uses is erased with its
    deallocation.  Function arguments may alias each other unless marked
    ``llvm.noalias``.

    Two more steps save launches: a zero-initialized reduction or GEMM that
    gpu-linalg-to-kernels would split (default options; atomics after a
    zero-fill kernel) gets its zero fill as a generic before it, which then
    merges like any other (several fills become one kernel); and the first
    elementwise generic reading a GEMM's result moves up next to the GEMM,
    where the GEMM kernel applies it as its epilogue."""

    name = "gpu-fuse-generics"

    def apply(self, module: ir.Operation) -> None:
        for fn in host_functions(module):
            for block in _blocks(fn):
                _explicit_zero_fills(block)
                fuser = _Fuser(block)
                fuser.run()
                fuser.epilogues_next_to_gemms()


def _blocks(op: ir.Operation) -> list[ir.Block]:
    """The blocks of ``op``'s regions and of the host ops nested in them
    (not the bodies of generics or kernels)."""
    out = []
    for region in op.regions:
        for block in region.blocks:
            out.append(block)
            for inner in block.operations:
                inner = as_op(inner)
                if inner.name.startswith("linalg.") or inner.name == "gpu.launch":
                    continue
                out.extend(_blocks(inner))
    return out


# --- zero fills of split reductions ---------------------------------------------

def _splits(gen: Generic) -> bool:
    """Whether gpu-linalg-to-kernels (default options) splits ``gen`` over
    blocks that accumulate atomically after a zero-fill kernel."""
    ctx = KernelContext(KernelOptions(), None)
    try:
        g = match_gemm(gen)
        if g is not None and gemm_worthwhile(gen, g):
            from .kernels.gemm import GemmTiling
            return GemmTiling.plan(ctx, gen, g).splits > 1
        combiners = match_reduction(gen)
        return combiners is not None and reduction_splits(ctx, gen, combiners) > 1
    except Exception:   # noqa: BLE001 -- a kernel planner that changed: no fill
        return False


def _explicit_zero_fills(block: ir.Block) -> None:
    """A zero-initialized reduction that its kernel would split gets its
    zero fill as an all-parallel generic before it (instead of the fill
    kernel gpu-linalg-to-kernels adds), which can then merge with other
    generics; its ``gradir.zero_init`` goes.  Correct whatever the kernel
    does: an unsplit kernel adds to the zeros."""
    for op in [as_op(o) for o in block.operations]:
        if op.name != "linalg.generic" or ZERO_INIT not in op.attributes:
            continue
        try:
            gen = Generic(op)
        except GenericError:
            continue
        if not gen.reduction or not _splits(gen):
            continue
        writes = [region_of(v) for v in gen.outputs]
        reads = [region_of(v) for v in gen.inputs if isinstance(v.type, ir.MemRefType)]
        reads += [region_of(v) for _, v in captured_values(op)]
        if any(w.overlaps(r) for w in writes for r in reads):
            continue        # the fill would change what it reads
        n_in = len(gen.inputs)
        pos = {d: i for i, d in enumerate(gen.parallel)}
        prange = [gen.ranges[d] for d in gen.parallel]
        maps = []
        for j, out in enumerate(gen.outputs):
            amap = gen.maps[n_in + j]
            if not all(isinstance(e, ir.AffineDimExpr) and ir.AffineDimExpr(e).position in pos
                       for e in amap.results):
                break
            dims = [pos[ir.AffineDimExpr(e).position] for e in amap.results]
            if sorted(dims) != list(range(len(prange))) or \
                    [prange[d] for d in dims] != list(ir.MemRefType(out.type).shape):
                break
            maps.append(ir.AffineMap.get(len(prange), 0,
                                         [ir.AffineDimExpr.get(d) for d in dims]))
        else:
            _fill_before(op, gen, prange, maps)


def _fill_before(op: ir.Operation, gen: Generic, prange: list, maps: list) -> None:
    ip, loc = ir.InsertionPoint(op), op.location
    with loc:
        scalars, ins_maps = [], []
        for out in gen.outputs:
            t = ir.MemRefType(out.type).element_type
            zero = ir.FloatAttr.get(t, 0.0) if isinstance(t, ir.FloatType) else \
                ir.IntegerAttr.get(t, 0)
            scalars.append(ir.Operation.create("arith.constant", results=[t],
                                               attributes={"value": zero}, ip=ip).results[0])
            ins_maps.append(ir.AffineMap.get(len(prange), 0, []))
        attrs = {
            "indexing_maps": ir.ArrayAttr.get([ir.AffineMapAttr.get(m)
                                               for m in ins_maps + maps]),
            "iterator_types": ir.ArrayAttr.get(
                [ir.Attribute.parse("#linalg.iterator_type<parallel>")] * len(prange)),
            "operandSegmentSizes": ir.DenseI32ArrayAttr.get([len(scalars), len(scalars)]),
        }
        fill = ir.Operation.create("linalg.generic", results=[],
                                   operands=scalars + list(gen.outputs),
                                   attributes=attrs, regions=1, ip=ip)
        types = [v.type for v in scalars] * 2
        block = fill.regions[0].blocks.append(*types, arg_locs=[loc] * len(types))
        with ir.InsertionPoint(block):
            ir.Operation.create("linalg.yield", results=[],
                                operands=list(block.arguments)[:len(scalars)])
    del op.attributes[ZERO_INIT]


# --- generics ---------------------------------------------------------------------------

@dataclass
class Access:
    """One memref operand of a generic: its value, indexing map (over the
    generic's loop dims), region, and whether the body reads it."""
    value: ir.Value
    amap: ir.AffineMap
    region: Region
    read: bool


class Info:
    """A fusable generic: ``kind`` parallel or reduction."""

    def __init__(self, op: ir.Operation, gen: Generic, kind: str):
        self.op, self.gen, self.kind = op, gen, kind
        n_in = len(gen.inputs)
        self.ins = [Access(v, m, region_of(v), gen.used(k)) if isinstance(v.type, ir.MemRefType)
                    else None for k, (v, m) in enumerate(zip(gen.inputs, gen.maps))]
        self.outs = [Access(v, gen.maps[n_in + j], region_of(v), gen.used(n_in + j))
                     for j, v in enumerate(gen.outputs)]
        self.body_reads = [region_of(v) for _, v in captured_values(op)]
        self.effects = effects_of(op)

    @property
    def ranges(self):
        return self.gen.ranges


def _info(op: ir.Operation) -> Info | None:
    if op.name != "linalg.generic":
        return None
    if any((a if isinstance(a, str) else a.name) not in _KNOWN_ATTRS for a in op.attributes):
        return None
    if any(not isinstance(v.type, ir.MemRefType) for v in outputs_of_op(op)):
        return None
    try:
        gen = Generic(op)
    except GenericError:
        return None
    for inner in nested_ops(op):
        if inner.name in ("memref.store", "memref.atomic_rmw") or inner.regions and \
                inner.name != "scf.if" or "call" in inner.name:
            return None
    for user, _ in captured_values(op):
        if user.name != "memref.load":
            return None
    if not gen.reduction:
        return Info(op, gen, PARALLEL)
    if match_gemm(gen) is not None or match_reduction(gen) is None:
        return None
    return Info(op, gen, REDUCTION)


def outputs_of_op(op: ir.Operation) -> list:
    sizes = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    return list(op.operands)[sizes[0]:sizes[0] + sizes[1]]


# --- loop dimension matching ---------------------------------------------------------

def _match_maps(mx: ir.AffineMap, my: ir.AffineMap, pi: dict) -> bool:
    """Extends ``pi`` (x dim -> y dim) so that ``mx`` and ``my`` agree;
    False when they cannot."""
    if len(mx.results) != len(my.results):
        return False
    for ex, ey in zip(mx.results, my.results):
        if isinstance(ex, ir.AffineDimExpr) and isinstance(ey, ir.AffineDimExpr):
            dx, dy = ir.AffineDimExpr(ex).position, ir.AffineDimExpr(ey).position
            if pi.get(dx, dy) != dy or (dy in pi.values() and pi.get(dx) != dy):
                return False
            pi[dx] = dy
        elif str(ex) != str(ey):
            return False
    return True


def _complete(pi: dict, rx: list, ry: list, kx: list, ky: list) -> dict | None:
    """``pi`` made a bijection between equal ranges of the same iterator
    kind (unmatched dims paired in order), or None."""
    if len(rx) != len(ry):
        return None
    used = set(pi.values())
    for dx in range(len(rx)):
        if dx in pi:
            continue
        for dy in range(len(ry)):
            if dy not in used and ry[dy] == rx[dx] and ky[dy] == kx[dx]:
                pi[dx] = dy
                used.add(dy)
                break
        else:
            return None
    if any(rx[dx] != ry[dy] or kx[dx] != ky[dy] for dx, dy in pi.items()):
        return None
    return pi


def _injective(amap: ir.AffineMap, ranges: list) -> bool:
    """Every loop dim with extent > 1 is a result of ``amap`` (each point
    of the loop space has its own element)."""
    seen = set()
    for e in amap.results:
        if isinstance(e, ir.AffineDimExpr):
            seen.add(ir.AffineDimExpr(e).position)
    return all(d in seen or r == 1 for d, r in enumerate(ranges))


def _covers(maps: list, n: int) -> bool:
    """Every one of the ``n`` loop dims is a result of one of ``maps``."""
    seen = set()
    for m in maps:
        for e in m.results:
            if isinstance(e, ir.AffineDimExpr):
                seen.add(ir.AffineDimExpr(e).position)
    return len(seen) == n


def _compose(amap: ir.AffineMap, sigma: list, n: int) -> ir.AffineMap:
    """``amap`` over another loop space: its dim i is dim ``sigma[i]``."""
    if list(sigma) == list(range(n)) and amap.n_dims == n:
        return amap
    sub = ir.AffineMap.get(n, 0, [ir.AffineDimExpr.get(d) for d in sigma])
    return ir.AffineMap.get(n, 0, [e.compose(sub) for e in amap.results])


# --- the fuser ------------------------------------------------------------------------

@dataclass
class Plan:
    """How two generics merge: ``sigma[p]`` maps part p's dims to the
    merged op's dims (those of part ``base``); ``rewired`` (second part's
    operand number -> first part's yield number); ``dropped`` first-part
    outputs; ``at_first``: the merged op goes to the first's place."""
    sigma: list
    base: int
    iterators: list
    rewired: dict
    dropped: set
    at_first: bool
    hoist: list
    sink: list = field(default_factory=list)
    extent: set = field(default_factory=set)


class _Fuser:
    def __init__(self, block: ir.Block):
        self.block = block
        self._effects: dict = {}
        self._infos: dict = {}

    def info(self, op: ir.Operation):
        if op not in self._infos:
            self._infos[op] = _info(op)
        return self._infos[op]

    def forget(self, op: ir.Operation) -> None:
        """Drops what is known of ``op`` (before it is erased: a new op may
        get its address)."""
        self._effects.pop(op, None)
        self._infos.pop(op, None)

    def effects(self, op: ir.Operation) -> Effects:
        eff = self._effects.get(op)
        if eff is None:
            eff = self._effects[op] = effects_of(op)
        return eff

    def run(self) -> None:
        while True:
            ops = [as_op(o) for o in self.block.operations]
            infos = {i: self.info(op) for i, op in enumerate(ops) if op.name == "linalg.generic"}
            infos = {i: x for i, x in infos.items() if x is not None}
            order = sorted(infos)
            done = False
            for ai in order:
                for bi in order:
                    if bi <= ai:
                        continue
                    if self._try(ops, ai, bi, infos[ai], infos[bi]):
                        done = True
                        break
                if done:
                    break
            if not done:
                return

    def epilogues_next_to_gemms(self) -> None:
        """Moves the first elementwise generic reading a GEMM's result (at
        the same element, one output) right after the GEMM when nothing in
        between stops it, so that the GEMM kernel can apply it as its
        epilogue (gpu-linalg-to-kernels)."""
        for g in [as_op(o) for o in self.block.operations]:
            if g.name != "linalg.generic" or g.block != self.block:
                continue
            try:
                gen = Generic(g)
            except GenericError:
                continue
            match = match_gemm(gen)
            if match is None or not gemm_worthwhile(gen, match):
                continue
            c = gen.outputs[0]
            ops = [as_op(o) for o in self.block.operations]
            gi = ops.index(g)
            for ei in range(gi + 1, len(ops)):
                e = ops[ei]
                info = self.info(e) if e.name == "linalg.generic" else None
                if info is None or info.kind != PARALLEL or len(info.outs) != 1 or not any(
                        x is not None and x.value == c
                        and x.amap == ir.AffineMap.get_identity(len(info.ranges))
                        for x in info.ins):
                    if any(w.overlaps(region_of(c)) for w in self.effects(e).writes) or \
                            self.effects(e).barrier:
                        break
                    continue
                between = ops[gi + 1:ei]
                if any(m.name not in VIEW_OPS | _ALLOCS | {"arith.constant"}
                       for m in between) and not any(
                        self.effects(m).conflicts(info.effects) for m in between):
                    hoist = self._hoist(e, set(between), g)
                    if hoist is not None:
                        e.move_after(g)
                        for h in hoist:
                            h.move_before(e)
                break

    # -- planning ------------------------------------------------------------------

    def _try(self, ops, ai, bi, a: Info, b: Info) -> bool:
        if a.kind == REDUCTION and b.kind == PARALLEL:
            return False
        if sorted(a.ranges) != sorted(b.ranges):
            return False
        if a.kind == b.kind and a.kind == REDUCTION and \
                sorted(a.gen.iterators) != sorted(b.gen.iterators):
            return False
        if a.kind == REDUCTION and a.gen.zero_init != b.gen.zero_init:
            return False
        plan = self._plan(ops, ai, bi, a, b)
        if plan is None:
            return False
        self._merge(ops, ai, bi, a, b, plan)
        return True

    def _pi(self, a: Info, b: Info, base_b: bool):
        """Dim correspondence b dim -> a dim (or a -> b when ``base_b``)."""
        ka, kb = a.gen.iterators, b.gen.iterators
        if base_b:
            ka = [PARALLEL] * len(ka)
            kb = [PARALLEL] * len(kb)
        candidates = []
        for r in b.ins + b.outs:
            if r is None:
                continue
            for w in a.outs:
                if w.region.overlaps(r.region) and same_view(w.value, r.value):
                    candidates.append((r.amap, w.amap))
        if not candidates:
            for r in b.ins:
                for s in a.ins:
                    if r is not None and s is not None and r.value == s.value:
                        candidates.append((r.amap, s.amap))
            ob, oa = b.outs[0], a.outs[0]
            if list(ir.MemRefType(ob.value.type).shape) == list(ir.MemRefType(oa.value.type).shape):
                candidates.append((ob.amap, oa.amap))
        for mb, ma in candidates:
            pi: dict = {}
            if _match_maps(mb, ma, pi):
                pi = _complete(pi, b.ranges, a.ranges, kb, ka)
                if pi is not None:
                    return pi
        return _complete({}, b.ranges, a.ranges, kb, ka)

    def _plan(self, ops, ai, bi, a: Info, b: Info) -> Plan | None:
        into_reduction = a.kind == PARALLEL and b.kind == REDUCTION
        pi = self._pi(a, b, into_reduction)
        if pi is None:
            return None
        n = len(a.ranges)
        if into_reduction:
            # b's dims are the merged op's: a's dim pi_inv
            inv = {v: k for k, v in pi.items()}
            sigma = [[inv[d] for d in range(n)], list(range(n))]
            base, iterators = 1, list(b.gen.iterators)
        else:
            sigma = [list(range(n)), [pi[d] for d in range(n)]]
            base, iterators = 0, list(a.gen.iterators)
        amaps = [_compose(x.amap, sigma[0], n) for x in a.outs]
        pointwise = a.kind == PARALLEL
        rewired, dropped = {}, set()
        n_in_b = len(b.ins)
        # second part's reads of what the first writes
        for k, r in enumerate(b.ins + b.outs):
            if r is None:
                continue
            rm = _compose(r.amap, sigma[1], n)
            hits = [j for j, w in enumerate(a.outs) if w.region.overlaps(r.region)]
            if not hits:
                continue
            if len(hits) > 1 and not all(same_view(a.outs[j].value, a.outs[hits[0]].value)
                                         for j in hits):
                return None
            j = hits[-1]
            w = a.outs[j]
            if not (pointwise and same_view(w.value, r.value) and rm == amaps[j]
                    and _injective(amaps[j], self._ranges(iterators, a, b, base))):
                return None
            if k < n_in_b:
                rewired[k] = j
            else:
                if b.kind != PARALLEL:
                    return None
                if r.read:
                    rewired[k] = j
                for jj in hits:            # overwritten at the same point
                    if a.outs[jj].read:
                        return None
                    dropped.add(jj)
        if any(w.overlaps(x) for w in a.effects.writes for x in b.body_reads):
            return None
        # the first part's reads of what the second writes
        for w in b.outs:
            wm = _compose(w.amap, sigma[1], n)
            for x in a.ins + [o for o in a.outs if o.read]:
                if x is None or not w.region.overlaps(x.region):
                    continue
                if not (pointwise and b.kind == PARALLEL and same_view(w.value, x.value)
                        and _compose(x.amap, sigma[0], n) == wm):
                    return None
            if any(w.region.overlaps(x) for x in a.body_reads):
                return None
        # where the merged op goes
        between = ops[ai + 1:bi]
        at_first, hoist = False, []
        # deallocations of what the first reads may move after the merged op
        sink = [m for m in between if m.name in _FREES and self.effects(m).conflicts(a.effects)]
        if any(m.name not in _FREES and self.effects(m).conflicts(a.effects) for m in between):
            sink = []
            if any(self.effects(m).conflicts(b.effects) for m in between):
                return None
            hoist = self._hoist(b.op, set(between), ops[ai])
            if hoist is None:
                return None
            at_first = True
        # outputs of the first part nobody reads any more
        after = [m for m in ops[ai + 1:] if m != b.op]
        for j, w in enumerate(a.outs):
            if j in dropped or w.read:
                continue
            if self._dead(w, after):
                dropped.add(j)
        if into_reduction and len(dropped) != len(a.outs):
            return None
        # every loop dim keeps an operand giving its extent (else the second
        # part's rewired inputs stay as operands its body does not read)
        maps = [_compose(x.amap, sigma[0], n) for x in a.ins if x is not None]
        maps += [m for j, m in enumerate(amaps) if j not in dropped]
        maps += [_compose(x.amap, sigma[1], n) for k, x in enumerate(b.ins + b.outs)
                 if x is not None and not (k < n_in_b and k in rewired)]
        extent = set()
        if not _covers(maps, n):
            extent = {k for k in rewired if k < n_in_b}
            maps += [_compose(b.ins[k].amap, sigma[1], n) for k in extent]
            if not _covers(maps, n):
                return None
        return Plan(sigma=sigma, base=base, iterators=iterators, rewired=rewired,
                    dropped=dropped, at_first=at_first, hoist=hoist,
                    sink=[] if at_first else sink, extent=extent)

    @staticmethod
    def _ranges(iterators, a: Info, b: Info, base: int):
        return (a, b)[base].ranges

    def _hoist(self, op: ir.Operation, between: set, first: ir.Operation):
        """The ops between that define values ``op`` uses, to move before
        ``first`` (None when one cannot move)."""
        need = []
        todo = list(op.operands) + [v for inner in nested_ops(op) for v in inner.operands]
        seen = set()
        while todo:
            v = todo.pop()
            d = owner_op(v)
            if d is None or d not in between or d in seen:
                continue
            if d.name not in _HOISTABLE and not (d.name in _ALLOCS and not list(d.operands)):
                return None
            seen.add(d)
            need.append(d)
            todo.extend(d.operands)
        order = [m for m in (as_op(o) for o in self.block.operations) if m in seen]
        return order

    def _dead(self, w: Access, after: list) -> bool:
        """Whether the value written through ``w`` is never read: the next
        op touching its elements frees or rewrites them all first."""
        if w.region.kind != "alloc":
            return False
        root_op = owner_op(w.region.key)
        if root_op is None or root_op.block != self.block:
            return False
        for m in after:
            eff = self.effects(m)
            if not eff.touches(w.region):
                continue
            if m.name in _FREES:
                return region_of(m.operands[0]).key == w.region.key
            return self._overwrites(m, w)
        return True

    def _overwrites(self, m: ir.Operation, w: Access) -> bool:
        """``m`` is a generic writing every element of ``w``'s view before
        reading any."""
        info = self.info(m)
        if info is None or info.kind != PARALLEL:
            return False
        hit = None
        for o in info.outs:
            if o.region.overlaps(w.region):
                if hit is not None or not same_view(o.value, w.value) or o.read:
                    return False
                hit = o
        if hit is None:
            return False
        if not hit.amap.is_permutation and not _injective(hit.amap, info.ranges):
            return False
        shape = list(ir.MemRefType(hit.value.type).shape)
        if any(not isinstance(e, ir.AffineDimExpr) for e in hit.amap.results):
            return False
        if [info.ranges[ir.AffineDimExpr(e).position] for e in hit.amap.results] != shape:
            return False
        if any(x is not None and x.region.overlaps(w.region) for x in info.ins):
            return False
        return not any(r.overlaps(w.region) for r in info.body_reads)

    # -- building ------------------------------------------------------------------

    def _merge(self, ops, ai, bi, a: Info, b: Info, plan: Plan) -> None:
        n = len(plan.iterators)
        parts = (a, b)
        ins: list = []          # (value, map)
        in_index: dict = {}
        part_in = ([], [])      # per part: merged input number, or None
        for p, part in enumerate(parts):
            for k, (v, m) in enumerate(zip(part.gen.inputs, part.gen.maps)):
                if p == 1 and k in plan.rewired and k not in plan.extent:
                    part_in[p].append(None)
                    continue
                cm = _compose(m, plan.sigma[p], n)
                key = (v, str(cm))
                if key not in in_index:
                    in_index[key] = len(ins)
                    ins.append((v, cm))
                part_in[p].append(in_index[key])
        outs = []               # (value, map, part, yield number)
        for p, part in enumerate(parts):
            n_in = len(part.gen.inputs)
            for j, v in enumerate(part.gen.outputs):
                if p == 0 and j in plan.dropped:
                    continue
                outs.append((v, _compose(part.gen.maps[n_in + j], plan.sigma[p], n), p, j))
        maps = [m for _, m in ins] + [m for _, m, _, _ in outs]
        attrs = {
            "indexing_maps": ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
            "iterator_types": ir.ArrayAttr.get(
                [ir.Attribute.parse(f"#linalg.iterator_type<{k}>") for k in plan.iterators]),
            "operandSegmentSizes": ir.DenseI32ArrayAttr.get([len(ins), len(outs)]),
        }
        if b.gen.zero_init and b.kind == REDUCTION:
            attrs[ZERO_INIT] = ir.UnitAttr.get()
        anchor = ops[ai] if plan.at_first else ops[bi]
        for h in plan.hoist:
            h.move_before(ops[ai])
        loc = b.op.location
        new = ir.Operation.create("linalg.generic", results=[],
                                  operands=[v for v, _ in ins] + [v for v, _, _, _ in outs],
                                  attributes=attrs, regions=1, loc=loc,
                                  ip=ir.InsertionPoint(anchor))
        arg_types = [_element(v) for v, _ in ins] + [_element(v) for v, _, _, _ in outs]
        block = new.regions[0].blocks.append(*arg_types, arg_locs=[loc] * len(arg_types))
        args = list(block.arguments)
        out_arg = {(p, j): args[len(ins) + i] for i, (_, _, p, j) in enumerate(outs)}
        yields = ([], [])
        with ir.InsertionPoint(block), loc:
            for p, part in enumerate(parts):
                mapping = {}
                n_in = len(part.gen.inputs)
                for k, arg in enumerate(part.gen.body_args):
                    if k < n_in:
                        if p == 1 and k in plan.rewired:
                            mapping[arg] = yields[0][plan.rewired[k]]
                        else:
                            mapping[arg] = args[part_in[p][k]]
                    else:
                        j = k - n_in
                        if p == 1 and k in plan.rewired:
                            mapping[arg] = yields[0][plan.rewired[k]]
                        elif (p, j) in out_arg:
                            mapping[arg] = out_arg[(p, j)]
                yields[p].extend(_clone_body(part.gen.block, mapping, plan.sigma[p]))
            ir.Operation.create("linalg.yield", results=[],
                                operands=[yields[p][j] for _, _, p, j in outs])
        for free in reversed(plan.sink):
            free.move_after(new)
        dropped = [a.gen.outputs[j] for j in sorted(plan.dropped)]
        for op in (a.op, b.op):
            self.forget(op)
            op.erase()
        for v in dropped:
            _erase_if_unused(region_of(v), self.forget)


def _element(v: ir.Value) -> ir.Type:
    return ir.MemRefType(v.type).element_type if isinstance(v.type, ir.MemRefType) else v.type


def _clone_body(block: ir.Block, mapping: dict, sigma: list) -> list:
    """Clones ``block``'s ops (its block arguments bound by ``mapping``,
    ``linalg.index d`` renumbered by ``sigma``) at the insertion point;
    returns the mapped yielded values."""
    body = [as_op(o) for o in block.operations]
    i64 = ir.IntegerType.get_signless(64)
    for op in body[:-1]:
        new = op.clone(ip=ir.InsertionPoint.current)
        _remap(new, mapping, sigma, i64)
        for old_r, new_r in zip(op.results, new.results):
            mapping[old_r] = new_r
    return [mapping.get(v, v) for v in body[-1].operands]


def _remap(op: ir.Operation, mapping: dict, sigma: list, i64) -> None:
    for i, v in enumerate(list(op.operands)):
        if v in mapping:
            op.operands[i] = mapping[v]
    if op.name == "linalg.index":
        d = ir.IntegerAttr(op.attributes["dim"]).value
        op.attributes["dim"] = ir.IntegerAttr.get(i64, sigma[d])
    for region in op.regions:
        for blk in region.blocks:
            for inner in blk.operations:
                _remap(as_op(inner), mapping, sigma, i64)


def _erase_if_unused(region: Region, forget) -> None:
    """Erases a local buffer (with its views and deallocations) that
    nothing else uses."""
    root = region.key
    alloc = owner_op(root) if region.kind == "alloc" else None
    if alloc is None:
        return
    doomed, views, todo = [], [], [root]
    while todo:
        v = todo.pop()
        for user, number in _compat.uses_of(v):
            if user.name in VIEW_OPS and number == 0:
                views.append(user)
                todo.extend(user.results)
            elif user.name in _FREES:
                doomed.append(user)
            else:
                return
    for op in doomed + list(reversed(views)) + [alloc]:
        forget(op)
        op.erase()
