"""rlx-scalarize: tiny static tensors as scalars before bufferization."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from mlir import ir

from ... import _compat
from ...ir import functions
from ...passes.base import ModulePass, option

__all__ = ["RlxScalarize"]

# Ops that only move elements (row-major order kept).
_RESHAPES = frozenset({"tensor.expand_shape", "tensor.collapse_shape", "tensor.cast"})
_SLICES = frozenset({"tensor.extract_slice", "tensor.insert_slice"})
_LOOPS = frozenset({"scf.while", "scf.for", "scf.if"})


@dataclass(frozen=True)
class RlxScalarize(ModulePass):
    """Computes tensors of at most ``max-elements`` elements (static shapes)
    on scalars: no buffer for them after bufferization.

    Run on linalg-on-tensors right before bufferization.  Programs of many
    tiny ops (0-d and 2-element f64 tensors in gradient-descent loops) spend
    their time allocating, copying and freeing one buffer per op and
    iteration otherwise.  Rewritten here:

    - a ``linalg.generic`` (no nested regions, indexing maps of dims and
      constants) whose operands are all tiny tensors and whose iteration
      domain has at most ``max-elements`` points: its body once per point,
      in the lexicographic order of ``convert-linalg-to-loops`` (the same
      arithmetic in the same order: bitwise the same results), inputs read
      with ``tensor.extract``, results made with ``tensor.from_elements``;
    - ``linalg.fill``, ``tensor.expand_shape``/``collapse_shape``/``cast``
      of tiny tensors, and tiny ``tensor.extract_slice``s (static sizes and
      strides): ``tensor.from_elements`` of the elements;
    - a tiny tensor's ``tensor.insert_slice`` (static sizes and strides):
      ``tensor.from_elements`` into a tiny tensor, one ``tensor.insert``
      per element into a bigger one (a loop's tape: stores in place);
    - ``arith.select`` of tiny tensors: a select per element;
    - ``scf.while``, ``scf.for`` and ``scf.if`` carrying tiny tensors: they
      carry the elements as scalars instead (the tensor rebuilt with
      ``tensor.from_elements`` where a loop's result or block argument was).

    ``canonicalize`` and ``cse`` afterwards fold each ``tensor.extract`` of a
    ``tensor.from_elements`` to the scalar, so that only the tensors used by
    other ops (function results, calls, big ops) remain.

        %r = linalg.generic {iterator_types = ["reduction"]}
            ins(%x : tensor<2xf64>) outs(%zero : tensor<f64>) {...addf...}
    becomes
        %x0 = tensor.extract %x[%c0]
        %z = tensor.extract %zero[]
        %s0 = arith.addf %x0, %z
        %x1 = tensor.extract %x[%c1]
        %s1 = arith.addf %x1, %s0
        %r = tensor.from_elements %s1 : tensor<f64>
    """

    name = "rlx-scalarize"

    max_elements: int = option(4, "largest tensor (elements) computed on scalars")

    def apply(self, module: ir.Operation) -> None:
        limit = self.max_elements
        for fn in functions(module, nested=True):
            # (tensor results only: not a generic's scalar arith.select,
            # erased with the generic)
            ops = _compat.collect_ops(fn, lambda o: (
                o.name in _LOOPS or o.name in _ELEMENT_OPS and any(
                    isinstance(r.type, ir.RankedTensorType) for r in o.results)))
            loops = []
            for op in ops:
                if op.name in _LOOPS:
                    loops.append(op)
                elif op.name in _SLICES or _tiny_op(op, limit):
                    _ELEMENT_OPS[op.name](op, limit)
            # outer loops first: an inner loop then reads the outer one's
            # block arguments as scalars (no tensor yielded from outside an
            # scf.if, which canonicalize would make a select of tensors)
            for op in loops:
                _scalarize_loop(op, limit)


# --- helpers ---

def _tiny(t: ir.Type, limit: int) -> bool:
    if not isinstance(t, ir.RankedTensorType):
        return False
    t = ir.RankedTensorType(t)
    if not t.has_static_shape:
        return False
    et = t.element_type
    if not isinstance(et, (ir.FloatType, ir.IntegerType, ir.IndexType)):
        return False
    return math.prod(t.shape) <= limit


def _tiny_op(op: ir.Operation, limit: int) -> bool:
    if not op.results:
        return False
    return all(_tiny(v.type, limit) for v in list(op.operands) + list(op.results)
               if isinstance(v.type, (ir.RankedTensorType, ir.UnrankedTensorType)))


def _points(shape) -> list[tuple[int, ...]]:
    return list(itertools.product(*(range(d) for d in shape)))


def _index(i: int) -> ir.Value:
    return _compat_const(ir.IndexType.get(), ir.IntegerAttr.get(ir.IndexType.get(), i))


def _compat_const(t: ir.Type, attr: ir.Attribute) -> ir.Value:
    return ir.Operation.create("arith.constant", results=[t],
                               attributes={"value": attr}).result


def _extract(t: ir.Value, point) -> ir.Value:
    owner = _compat.defining_op(t)
    shape = ir.RankedTensorType(t.type).shape
    if owner is not None and owner.name == "tensor.from_elements":
        flat = 0
        for d, i in zip(shape, point):
            flat = flat * d + i
        return owner.operands[flat]
    elt = ir.RankedTensorType(t.type).element_type
    return ir.Operation.create("tensor.extract", results=[elt],
                               operands=[t, *[_index(i) for i in point]]).result


def _elements(t: ir.Value) -> list[ir.Value]:
    return [_extract(t, p) for p in _points(ir.RankedTensorType(t.type).shape)]


def _from_elements(t: ir.Type, scalars) -> ir.Value:
    return ir.Operation.create("tensor.from_elements", results=[t],
                               operands=list(scalars)).result


def _replace(op: ir.Operation, values) -> None:
    for old, new in zip(op.results, values):
        old.replace_all_uses_with(new)
    op.erase()


# --- element ops ---

def _affine_results(attr: ir.Attribute):
    """Each result of an indexing map: ("d", position) or ("c", value); None
    for other expressions."""
    amap = ir.AffineMapAttr(attr).value
    out = []
    for e in amap.results:
        if isinstance(e, ir.AffineDimExpr):
            out.append(("d", ir.AffineDimExpr(e).position))
        elif isinstance(e, ir.AffineConstantExpr):
            out.append(("c", ir.AffineConstantExpr(e).value))
        else:
            return None
    return out, amap.n_dims


def _generic(op: ir.Operation, limit: int) -> None:
    body = op.regions[0].blocks[0]
    if any(len(inner.regions) for inner in body.operations):
        return
    maps = [_affine_results(a) for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    if any(m is None for m in maps):
        return
    n_dims = maps[0][1]
    operands = list(op.operands)
    n_out = len(op.results)
    n_in = len(operands) - n_out
    if len(maps) != len(operands):
        return
    ranges = [None] * n_dims
    for v, (res, _) in zip(operands, maps):
        for (kind, pos), d in zip(res, ir.RankedTensorType(v.type).shape):
            if kind == "d":
                ranges[pos] = d
    if any(r is None for r in ranges) or math.prod(ranges) > limit:
        return
    with ir.InsertionPoint(op), op.location:
        outs = [dict(zip(_points(ir.RankedTensorType(v.type).shape), _elements(v)))
                for v in operands[n_in:]]
        ins = {}
        for point in _points(ranges):
            def at(res):
                return tuple(point[p] if k == "d" else p for k, p in res)
            mapping = {}
            for arg, v, (res, _) in zip(list(body.arguments)[:n_in], operands, maps):
                key = (v, at(res))
                if key not in ins:
                    ins[key] = _extract(v, at(res))
                mapping[arg] = ins[key]
            for k, arg in enumerate(list(body.arguments)[n_in:]):
                mapping[arg] = outs[k][at(maps[n_in + k][0])]
            for inner in body.operations:
                if inner.name == "linalg.yield":
                    for k, v in enumerate(inner.operands):
                        outs[k][at(maps[n_in + k][0])] = mapping.get(v, v)
                    continue
                if inner.name == "linalg.index":
                    dim = ir.IntegerAttr(inner.attributes["dim"]).value
                    mapping[inner.result] = _index(point[dim])
                    continue
                clone = inner.clone()
                for i, v in enumerate(clone.operands):
                    if v in mapping:
                        clone.operands[i] = mapping[v]
                for old, new in zip(inner.results, clone.results):
                    mapping[old] = new
        values = [_from_elements(r.type, [outs[k][p] for p in _points(
                  ir.RankedTensorType(r.type).shape)]) for k, r in enumerate(op.results)]
    _replace(op, values)


def _fill(op: ir.Operation, limit: int) -> None:
    t = op.results[0].type
    with ir.InsertionPoint(op), op.location:
        value = _from_elements(t, [op.operands[0]] * math.prod(ir.RankedTensorType(t).shape))
    _replace(op, [value])


def _reshape(op: ir.Operation, limit: int) -> None:
    with ir.InsertionPoint(op), op.location:
        value = _from_elements(op.results[0].type, _elements(op.operands[0]))
    _replace(op, [value])


def _static(op: ir.Operation, name: str):
    return list(ir.DenseI64ArrayAttr(op.attributes[name]))


_DYNAMIC = -(2 ** 63)


def _slice_points(op: ir.Operation, n_fixed: int):
    """``(point of the slice, indices in the sliced tensor)`` for every
    element of a slice with static sizes and strides (offsets static or
    not: index values then), or None."""
    sizes, strides = _static(op, "static_sizes"), _static(op, "static_strides")
    if _DYNAMIC in sizes or _DYNAMIC in strides:
        return None
    offsets = _static(op, "static_offsets")
    dynamic = list(op.operands)[n_fixed:]
    if len(dynamic) != offsets.count(_DYNAMIC):
        return None
    out = []
    for p in _points(sizes):
        idx, k = [], 0
        for o, i, st in zip(offsets, p, strides):
            if o == _DYNAMIC:
                base = dynamic[k]
                k += 1
                if i * st:
                    base = ir.Operation.create("arith.addi", results=[base.type],
                                               operands=[base, _index(i * st)]).result
                idx.append(base)
            else:
                idx.append(o + i * st)
        out.append((p, idx))
    return out


def _at(t: ir.Value, idx) -> ir.Value:
    if all(isinstance(i, int) for i in idx):
        return _extract(t, tuple(idx))
    elt = ir.RankedTensorType(t.type).element_type
    return ir.Operation.create("tensor.extract", results=[elt], operands=[
        t, *[_index(i) if isinstance(i, int) else i for i in idx]]).result


def _extract_slice(op: ir.Operation, limit: int) -> None:
    source, result = op.operands[0], op.results[0]
    if not (_tiny(result.type, limit) and isinstance(source.type, ir.RankedTensorType)):
        return
    with ir.InsertionPoint(op), op.location:
        pairs = _slice_points(op, 1)
        if pairs is None:
            return
        value = _from_elements(result.type, [_at(source, q) for _, q in pairs])
    _replace(op, [value])


def _insert_slice(op: ir.Operation, limit: int) -> None:
    src, dest = op.operands[0], op.operands[1]
    if not _tiny(src.type, limit) or not isinstance(dest.type, ir.RankedTensorType):
        return
    n = math.prod(ir.RankedTensorType(src.type).shape)
    if math.prod(_static(op, "static_sizes")) != n:
        return
    with ir.InsertionPoint(op), op.location:
        pairs = _slice_points(op, 2)
        if pairs is None:
            return
        flat_src = _elements(src)       # the source's rank may drop unit dims
        if _tiny(dest.type, limit) and all(isinstance(i, int) for _, q in pairs for i in q):
            shape = ir.RankedTensorType(dest.type).shape
            elements = dict(zip(_points(shape), _elements(dest)))
            for k, (_, q) in enumerate(pairs):
                elements[tuple(q)] = flat_src[k]
            value = _from_elements(op.results[0].type, [elements[p] for p in _points(shape)])
        else:
            # into a big tensor (a loop's tape): one tensor.insert per
            # element, stores in place after bufferization
            value = dest
            for k, (_, q) in enumerate(pairs):
                value = ir.Operation.create("tensor.insert", results=[dest.type], operands=[
                    flat_src[k], value,
                    *[_index(i) if isinstance(i, int) else i for i in q]]).result
    _replace(op, [value])


def _select(op: ir.Operation, limit: int) -> None:
    cond, a, b = op.operands
    t = op.results[0].type
    if not isinstance(t, ir.RankedTensorType):
        return
    points = _points(ir.RankedTensorType(t).shape)
    with ir.InsertionPoint(op), op.location:
        conds = (_elements(cond) if isinstance(cond.type, ir.RankedTensorType)
                 else [cond] * len(points))
        value = _from_elements(t, [
            ir.Operation.create("arith.select", results=[x.type], operands=[c, x, y]).result
            for c, x, y in zip(conds, _elements(a), _elements(b))])
    _replace(op, [value])


_ELEMENT_OPS = {"linalg.generic": _generic, "linalg.fill": _fill, "arith.select": _select,
                "tensor.extract_slice": _extract_slice, "tensor.insert_slice": _insert_slice,
                **{name: _reshape for name in _RESHAPES}}


# --- loops ---

def _flat(types, limit):
    """``(kept types, scalar types, spans)``: the tiny tensor types become
    their element types, appended after the kept ones; ``spans[i]`` is
    ``("keep", j)`` or ``("tiny", first scalar, count, type)``."""
    kept, scalars, spans = [], [], []
    for t in types:
        if _tiny(t, limit):
            rt = ir.RankedTensorType(t)
            n = math.prod(rt.shape)
            spans.append(("tiny", len(scalars), n, t))
            scalars += [rt.element_type] * n
        else:
            spans.append(("keep", len(kept)))
            kept.append(t)
    return kept, scalars, spans


def _flat_values(values, spans) -> list[ir.Value]:
    kept, scalars = [], []
    for v, span in zip(values, spans):
        if span[0] == "keep":
            kept.append(v)
        else:
            scalars += _elements(v)
    return kept + scalars


def _rebuild(values, spans, n_kept):
    out = []
    for span in spans:
        if span[0] == "keep":
            out.append(values[span[1]])
        else:
            _, first, n, t = span
            out.append(_from_elements(t, values[n_kept + first:n_kept + first + n]))
    return out


def _retype_block(block: ir.Block, skip: int, spans, n_kept, scalar_types) -> None:
    """Block arguments after the first ``skip`` follow ``spans``."""
    args = list(block.arguments)[skip:]
    start = len(block.arguments)
    for t in scalar_types:
        block.add_argument(t, ir.Location.unknown())
    new = list(block.arguments)[start:]
    first = block.operations[0] if len(block.operations) else None
    ip = ir.InsertionPoint(first) if first is not None else ir.InsertionPoint(block)
    with ip, ir.Location.unknown():
        for arg, span in zip(args, spans):
            if span[0] == "tiny":
                _, k, n, t = span
                arg.replace_all_uses_with(_from_elements(t, new[k:k + n]))
    for i in reversed([skip + i for i, span in enumerate(spans) if span[0] == "tiny"]):
        block.erase_argument(i)


def _retype_terminator(block: ir.Block, skip: int, spans) -> None:
    term = _compat.terminator(block)
    with ir.InsertionPoint(term), term.location:
        ops = list(term.operands)
        new = ops[:skip] + _flat_values(ops[skip:], spans)
        ir.Operation.create(term.name, operands=new)
    term.erase()


def _attributes(op: ir.Operation) -> dict:
    named = [op.attributes[i] for i in range(len(op.attributes))]
    return {a.name: a.attr for a in named}


def _scalarize_loop(op: ir.Operation, limit: int) -> None:
    types = [r.type for r in op.results]
    if op.name == "scf.while":
        init_types = [v.type for v in op.operands]
        if not any(_tiny(t, limit) for t in types + init_types):
            return
        ikept, iscalars, ispans = _flat(init_types, limit)
    elif not any(_tiny(t, limit) for t in types):
        return
    kept, scalars, spans = _flat(types, limit)
    with ir.InsertionPoint(op), op.location:
        if op.name == "scf.while":
            operands = _flat_values(list(op.operands), ispans)
        elif op.name == "scf.for":
            ops = list(op.operands)
            operands = ops[:3] + _flat_values(ops[3:], spans)
        else:
            operands = list(op.operands)
        new = ir.Operation.create(op.name, results=kept + scalars, operands=operands,
                                  attributes=_attributes(op),
                                  regions=len(op.regions))
        for old_region, new_region in zip(op.regions, new.regions):
            for block in list(old_region.blocks):
                block.append_to(new_region)
    if op.name == "scf.while":
        before, after = new.regions[0].blocks[0], new.regions[1].blocks[0]
        _retype_block(before, 0, ispans, len(ikept), iscalars)
        _retype_terminator(before, 1, spans)           # scf.condition(%c) results...
        _retype_block(after, 0, spans, len(kept), scalars)
        _retype_terminator(after, 0, ispans)
    elif op.name == "scf.for":
        body = new.regions[0].blocks[0]
        _retype_block(body, 1, spans, len(kept), scalars)
        _retype_terminator(body, 0, spans)
    else:
        for region in new.regions:
            for block in region.blocks:
                _retype_terminator(block, 0, spans)
    with ir.InsertionPoint(op), op.location:
        values = _rebuild(list(new.results), spans, len(kept))
    _replace(op, values)
