"""rlx.matmul -> ``linalg.matmul`` / ``linalg.batch_matmul`` (numpy
semantics: 1-D operands get a unit dim that the result drops again; batch
dims broadcast).

    %0 = "rlx.matmul"(%a, %b) : (tensor<4x5xf32>, tensor<5x3xf32>) -> tensor<4x3xf32>
becomes
    %z = linalg.fill ins(%cst0) outs(tensor.empty())
    %0 = linalg.matmul ins(%a, %b) outs(%z)

A 2-D lhs that is a 2-D transpose (``rlx.permute_dims``: the backward's
``x^T @ dy``) is read in place: the matmul gets a transposed indexing map
(``linalg.matmul {indexing_maps = [(m, n, k) -> (k, m), ...]}``) instead of
a materialized transpose.  The CPU schedule's outer products read a column
of the lhs per K step, which is a contiguous row of ``x`` then.  A
transposed rhs (``dy @ W^T``) stays ``linalg.transpose`` + ``linalg.matmul``
here: read through an indexing map, each K step would gather a strided
column of ``W`` (32 scalar loads per 16 FMAs; measured 2.7x slower than
transpose + matmul for 64x512 @ (512x512)^T, 0.55 ms against 0.21 ms,
AVX-512, one thread).  The CPU schedule instead fuses the transpose into
the matmul's loops (cpu_schedule.mlir.in, "matmuls reading a transposed
rhs"): each (K block, N tile) panel of ``W^T`` is transposed from ``W``
into a contiguous buffer, and ``W^T`` as a whole is never written.
``_matmul_in_place`` supports a transposed rhs map for other schedules.

A 2-D matmul of fewer than ``SMALL_MATMUL_MACS`` multiply-adds is marked
``gradir.small_matmul`` (a discardable unit attribute): too little work
for threads, so the CPU schedule's parallel entry point schedules it as the
single-threaded one does (peeled, not padded to column strips).  Measured
at threads=2 on 2 cores (AMD EPYC Zen 5, AVX-512): LeNet-5's 64x256x120
layer 129-139 us in padded strips (a parallel region), 26-27 us so;
64x120x84 73-75 us (strips run one after the other), 15 us so.

A batched lhs times a 2-D rhs is one ``linalg.matmul`` on the collapsed
``(batch*M, K)`` lhs (a kernel matmul reads a transposed rhs in place, as
in 2-D); otherwise the batch dims are broadcast to the common
batch shape, collapsed to one, and multiplied by ``linalg.batch_matmul``,
or, with the kernels, by a 3-D ``linalg.contract {gradir.kernel}``
(``_kernel_batched``: a kernel call per batch element) that reads its
operands in place: a lhs or rhs shared by the batch as one 2-D matrix, and
attention's head splits and transposes (``permute_dims`` and reshapes that
only split or merge dims) as permuted indexing maps on the tensor they
were copied from; a head merge reading the result (``permute_dims`` and
reshapes to ``(S, B, H*Dh)``) makes the contraction write that order.  The
Transformer layer's gradient step (batch 8, 4 heads) lost ten of its copies
so (1-2 MB each): the q, k and v head splits, k^T, the output gradient's
head split, probs^T, the forward's head merge and the backward's three;
one attention matmul alone, ``(8, 4, 128, 128)^T @ (8, 4, 128, 64)``, 0.55
-> 0.32 ms, a head split q @ k^T with its copies 0.51 -> 0.42 ms, probs @ v
with its head merge 0.37 -> 0.33 ms; the whole step 28.9 -> 27.9 ms (one
thread, AMD Zen 5, min CPU time of 150 steps, the mean of 6 pairs of
processes taking turns at load 5-7: the noise is about 1 ms).
Before the patterns run, ``fold_batch_sums`` turns the sum over its batch
of a batched matmul (a shared weight's gradient) into one 2-D matmul.
"""

from __future__ import annotations

import contextlib
import threading

from mlir import ir

from ... import _compat
from ..._compat import linalg  # not mlir.dialects.linalg: see _compat.linalg
from ...dialects.infer import broadcast_shapes
from .linalg_utils import broadcast_to, elt_of, filled, numel, reshape, shape_of, transpose
from .registry import lowers


# Multiply-adds below which a matmul is marked ``gradir.small_matmul``
# (see the module's docstring): 2^22 (4M; LeNet-5's largest dense layer,
# 64x256x120, is 2M; the MLP's 64x512x512, 16.7M, keeps its strips).
SMALL_MATMUL_MACS = 1 << 22


# --- issue 14 (compile time): matmuls as calls of the kernel library ---
_KERNELS = threading.local()
KERNEL_ELEMENT_TYPES = ("f32", "f64")


def kernels_enabled() -> bool:
    return getattr(_KERNELS, "value", False)


@contextlib.contextmanager
def matmul_kernels(enabled: bool):
    """Within it, 2-D f32/f64 matmuls become ``linalg.contract
    {gradir.kernel}`` (``rlx-to-linalg{matmul-kernels=true}``)."""
    saved, _KERNELS.value = kernels_enabled(), bool(enabled)
    try:
        yield
    finally:
        _KERNELS.value = saved


def _kernel_matmul(a, b, a_t: bool, b_t: bool, out_shape, elt, acc=None):
    """``linalg.contract {gradir.kernel}``: C = A @ B with ``a`` (K, M) when
    ``a_t``, ``b`` (N, K) when ``b_t`` (read in place by the kernel); C =
    ``acc`` + A @ B when ``acc`` is given (the kernels then read C: each
    element's FMA chain goes on from it).

    A contraction whose result is reshaped sits in an ``scf.execute_region
    no_inline`` of its own, and so does a reshape that makes an operand
    (``isolate_kernel_operands``, at the end of rlx-to-linalg): elementwise fusion's
    reshape propagation (``linalg-fuse-elementwise-ops``) would otherwise
    fold a reshape before or after it into it, making a generic
    contraction of higher rank the kernels do not take (LeNet's flatten
    before its first dense layer: that layer's matmuls became scalar loops,
    its step 25% slower).  Only then: a result yielded by such a region is
    copied into a function's out-param, where the contraction alone writes
    it in place."""
    m, n, k = (ir.AffineDimExpr.get(i) for i in range(3))
    maps = [ir.AffineMap.get(3, 0, [k, m] if a_t else [m, k]),
            ir.AffineMap.get(3, 0, [n, k] if b_t else [k, n]),
            ir.AffineMap.get(3, 0, [m, n])]
    c = linalg.contract(a, b, outs=[filled(out_shape, elt, 0) if acc is None else acc],
                        indexing_maps=maps)
    _compat.defining_op(c).attributes["gradir.kernel"] = ir.UnitAttr.get()
    return c


def _execute_region(result_type: ir.Type):
    """An empty ``scf.execute_region no_inline`` (canonicalization keeps it)
    with one result, and its block."""
    region = ir.Operation.create("scf.execute_region", results=[result_type],
                                 attributes={"no_inline": ir.UnitAttr.get()}, regions=1)
    return region, region.regions[0].blocks.append()


_RESHAPES = ("tensor.collapse_shape", "tensor.expand_shape")


def isolate_kernel_operands(module: ir.Operation) -> None:
    """A ``gradir.kernel`` contraction whose result a reshape reads (also
    through elementwise generics) moves into an ``scf.execute_region
    no_inline`` of its own, and every operand
    of one that a reshape makes comes from a copy of that reshape in a
    region of its own, just before the contraction (or its region; see
    ``_kernel_matmul``; run once the whole module is lowered: while
    rlx-to-linalg runs, the operands are still rlx ops)."""
    for op in _compat.collect_ops(module, lambda o: o.name == "linalg.contract"
                                  and "gradir.kernel" in o.attributes):
        result = op.results[0]
        if _reshaped_downstream(result):
            with ir.InsertionPoint(op), op.location:
                region, block = _execute_region(result.type)
            with ir.InsertionPoint(block), op.location:
                yield_op = ir.Operation.create("scf.yield", operands=[result])
            result.replace_all_uses_with(region.results[0])
            yield_op.operands[0] = result
            op.move_before(yield_op)
            anchor = region
        else:
            anchor = op
        for i in (0, 1):
            value = op.operands[i]
            producer = _compat.defining_op(value)
            if producer is None or producer.name not in _RESHAPES:
                continue
            with ir.InsertionPoint(anchor), op.location:
                region, block = _execute_region(value.type)
            with ir.InsertionPoint(block), op.location:
                ir.Operation.create("scf.yield", operands=[
                    reshape(producer.operands[0], shape_of(value))])
            op.operands[i] = region.results[0]
            if not _compat.uses_of(producer.results[0]):
                producer.erase()


def _reshaped_downstream(value, depth: int = 8) -> bool:
    """Whether a reshape reads ``value``, directly or through a chain of
    ``linalg.generic`` ops (at most ``depth`` deep): fusion's reshape
    propagation moves such a reshape up through the generics to the
    contraction (the Transformer's attention output projection: matmul,
    bias add, unflatten to (S, B, E); the projection became a scalar loop
    nest of 39% of the gradient step's time)."""
    for user, _ in _compat.uses_of(value):
        if user.name in _RESHAPES:
            return True
        if depth and user.name == "linalg.generic" and any(
                _reshaped_downstream(r, depth - 1) for r in user.results):
            return True
    return False


def _kernel_eligible(a, b, elt) -> bool:
    return (kernels_enabled() and str(elt) in KERNEL_ELEMENT_TYPES
            and elt_of(a) == elt and elt_of(b) == elt)
# --- end issue 14 ---


def _mark_small(result: ir.Value, m: int, n: int, k: int) -> ir.Value:
    if m * n * k < SMALL_MATMUL_MACS:
        _compat.defining_op(result).attributes["gradir.small_matmul"] = ir.UnitAttr.get()
    return result


@lowers("rlx.matmul")
def lower_matmul(op):
    a, b = op.operands
    elt = elt_of(op.results[0].type)
    out_shape = shape_of(op.results[0].type)
    sa, sb = shape_of(a), shape_of(b)
    if numel(out_shape) == 0 or 0 in sa or 0 in sb:
        # Nothing to multiply (a sum over an empty K is 0): no matmul, whose
        # tiling upstream does not expect zero-size dimensions.
        return [filled(out_shape, elt, 0)]
    if len(sa) == 2 and len(sb) == 2 and _kernel_eligible(a, b, elt):
        return [_kernel_2d(a, b, out_shape, elt)]
    if len(sa) == 2 and len(sb) == 2 and elt_of(a) == elt_of(b):
        at = _transposed_2d(a)
        if at is not None:
            return [_mark_small(_matmul_in_place(at, b, True, False, out_shape, elt),
                                sa[1], sb[1], sa[0])]
    if len(sa) == 1:
        sa = [1] + sa
        a = reshape(a, sa)
    if len(sb) == 1:
        sb = sb + [1]
        b = reshape(b, sb)
    m, k = sa[-2:]
    n = sb[-1]
    if all(d == 1 for d in sb[:-2]):  # rhs without (real) batch dims
        batch = sa[:-2]
        if _kernel_eligible(a, b, elt):
            # a transposed weight (x @ W^T, every dense layer) read in place, as in
            # 2-D; so is a lhs with a batch of 1
            if numel(batch) == 1:
                return [reshape(_kernel_2d(a, b, [m, n], elt), out_shape)]
            tb, dims = _operand_view(b, [], (2, 1))
            return [reshape(_kernel_matmul(reshape(a, [numel(batch) * m, k]), tb, False,
                                           dims == [1, 2], [numel(batch) * m, n], elt),
                            out_shape)]
        b = reshape(b, [k, n])
        lhs = reshape(a, [numel(batch) * m, k])
        c = _mark_small(linalg.matmul(lhs, b, outs=[filled([numel(batch) * m, n], elt, 0)]),
                        numel(batch) * m, n, k)
        return [reshape(c, out_shape)]
    batch = broadcast_shapes(sa[:-2], sb[:-2])
    if _kernel_eligible(a, b, elt):
        return [_kernel_batched(a, b, batch, (m, n, k), elt, op.results[0])]
    a = broadcast_to(a, batch + [m, k])
    b = broadcast_to(b, batch + [k, n])
    nb = numel(batch)
    c = linalg.batch_matmul(reshape(a, [nb, m, k]), reshape(b, [nb, k, n]),
                            outs=[filled([nb, m, n], elt, 0)])
    return [reshape(c, out_shape)]


# --- batched matmuls through the kernels, operands read in place ---

def _kernel_2d(a, b, out_shape, elt):
    """A 2-D kernel contraction of ``a`` (.., M, K) and ``b`` (.., K, N)
    (their leading dims all 1), each read in place (``_operand_view``): a
    transpose as a transposed indexing map, on the tensor it was made of."""
    ta, dims_a = _operand_view(a, [], (0, 2))
    tb, dims_b = _operand_view(b, [], (2, 1))
    return _kernel_matmul(ta, tb, dims_a == [2, 0], dims_b == [1, 2], out_shape, elt)


def _kernel_batched(a, b, batch, mnk, elt, result):
    """A batched matmul as a 3-D ``linalg.contract {gradir.kernel}`` over
    (batch, M, N, K) = (d0, d1, d2, d3): C (d0, d1, d2) = A (d0, d1, d3) @
    B (d0, d3, d2), the batch dims (already numpy-broadcast: ``batch``)
    collapsed to one.  Each operand is read in place where it can be
    (``_operand_view``): an operand whose batch dims are all 1 is one 2-D
    matrix every batch element reads (map ``(d1, d3)``: the broadcast is
    not materialized), and a head split or transpose (``permute_dims`` and
    reshapes that only split or merge dims) is a permutation of the
    operand's dims in the contraction's map, on a reshape of the tensor it
    was copied from (``(d1, d0, d3)``: a head's rows B*H*Dh elements
    apart, as the attention's ``(S, B*H, Dh)`` projections hold them).
    rlx-matmul-kernels calls the 2-D kernel per batch element on views of
    these.  The result likewise (``_merged_output``): when the matmul's
    ``result`` is only read by a chain of permutes and reshapes whose end
    holds its (batch, M, N) row-major in another order (a head merge:
    (B, H, S, Dh) -> (S, B, H*Dh)), the contraction writes that order (C's
    map ``(d1, d0, d2)``) and the chain's end reads it reshaped.  Returns
    the value of ``result``."""
    m, n, k = mnk
    nb = numel(batch)
    ta, la = _operand_view(a, batch, (1, 3))
    tb, lb = _operand_view(b, batch, (3, 2))
    merged = _merged_output(result, len(batch))
    order, shape = ([0, 1, 2], [nb, m, n]) if merged is None else merged[1:]
    d = [ir.AffineDimExpr.get(i) for i in range(4)]
    maps = [ir.AffineMap.get(4, 0, [d[i] for i in la]),
            ir.AffineMap.get(4, 0, [d[i] for i in lb]),
            ir.AffineMap.get(4, 0, [d[i] for i in order])]
    c = linalg.contract(ta, tb, outs=[filled(shape, elt, 0)], indexing_maps=maps)
    _compat.defining_op(c).attributes["gradir.kernel"] = ir.UnitAttr.get()
    if merged is not None:
        end = merged[0]
        end.replace_all_uses_with(reshape(c, shape_of(end)))
        # (the chain is left without uses; the result as well, once lowered)
        c = transpose(c, [order.index(i) for i in range(3)])
    return reshape(c, shape_of(result.type))


def _merged_output(result, nbatch):
    """``(end, order, shape)`` when ``result`` (batch..., M, N; ``nbatch``
    batch dims) is read only by a chain of permutes and reshapes, each read
    only by the next, whose last value ``end`` holds ``result``'s (batch,
    M, N) (the batch dims merged) row-major in the order ``order`` of those
    three, as a tensor of ``shape``, with N innermost; else None (also when
    the order is (batch, M, N): then the chain is views already)."""
    chain, steps = [result], []
    while len(chain) < 16:
        uses = _compat.uses_of(chain[-1])
        if len(uses) != 1 or len(uses[0][0].results) != 1:
            break
        nxt = uses[0][0].results[0]
        step = _view_step(nxt)
        if step is None or step[0] != chain[-1] or elt_of(nxt) != elt_of(result):
            break
        chain.append(nxt)
        steps.append(step[1])
    for j in range(len(chain) - 1, 0, -1):
        layout = _layout_back(chain, steps, j)
        if layout is None:
            continue
        found = _as_permutation(*layout, nbatch, True, numel(shape_of(chain[j])))
        if found is not None and found[0][-1] == 2 and found[0] != [0, 1, 2]:
            return (chain[j], *found)
    return None


def _layout_back(chain, steps, j):
    """(sizes, strides) of ``chain[0]`` as a view of ``chain[j]``'s elements
    (row-major), ``chain[i + 1]`` made of ``chain[i]`` by ``steps[i]`` (the
    chain read backwards), or None when a reshape on the way is no view."""
    return _chain_layout(chain, steps, j, inverse=True)


def _operand_view(v, batch, dims):
    """``(tensor, loop dims)``: what a batched kernel contraction reads for
    the operand ``v`` (batch..., rows, cols) and its indexing map's dims
    (``dims``: the loop dims of rows and cols; the batch is d0).  An operand
    without real batch dims is its 2-D matrix; one with a part of the batch
    (broadcast against the other operand's) is broadcast and collapsed to
    (batch, rows, cols); otherwise the first source on its chain of
    permutes and reshapes whose elements, row-major, are the operand's in
    some order of (batch, rows, cols) (``_permuted_source``), reshaped to
    that order."""
    shape = shape_of(v)
    rows, cols = shape[-2:]
    own = [1] * (len(batch) - len(shape) + 2) + shape[:-2]
    if all(x == 1 for x in own):
        found = _permuted_source(v, len(shape) - 2, False)
        if found is None:
            return reshape(v, [rows, cols]), list(dims)
        source, order = found
        return source, [dims[i] for i in order]
    if own != list(batch):
        return reshape(broadcast_to(v, list(batch) + [rows, cols]),
                       [numel(batch), rows, cols]), [0, *dims]
    found = _permuted_source(v, len(shape) - 2, True)
    if found is None:
        return reshape(v, [numel(batch), rows, cols]), [0, *dims]
    source, order = found
    return source, [(0, *dims)[i] for i in order]


_RESHAPE_OPS = ("rlx.reshape", "rlx.expand_dims", "rlx.squeeze", "rlx.flatten") + _RESHAPES


def _view_step(v):
    """``(operand, permutation)`` when ``v`` is a permutation of ``operand``'s
    dims (``rlx.permute_dims`` not lowered yet, or what it became:
    ``linalg.transpose`` or a copy ``linalg.generic``), ``(operand, None)``
    when a reshape of it; else None."""
    owner = _compat.defining_op(v)
    if owner is None or not owner.operands:
        return None
    if owner.name == "rlx.permute_dims":
        return owner.operands[0], _axes(owner)
    if owner.name == "linalg.transpose":
        return owner.operands[0], list(ir.DenseI64ArrayAttr(owner.attributes["permutation"]))
    if owner.name in _RESHAPE_OPS:
        return owner.operands[0], None
    if owner.name == "linalg.generic":
        perm = _copy_permutation(owner)
        if perm is not None:
            return owner.operands[0], perm
    return None


def _copy_permutation(op):
    """The permutation a ``linalg.generic`` copies its one input with (its
    output map the identity, its input map a permutation, its body a yield
    of the input element: ``lower_permute_dims``'s generic), else None."""
    if len(op.operands) != 2 or len(op.results) != 1 or "indexing_maps" not in op.attributes:
        return None
    maps = [ir.AffineMapAttr(x).value for x in ir.ArrayAttr(op.attributes["indexing_maps"])]
    rank = len(shape_of(op.results[0].type))
    if maps[1] != ir.AffineMap.get_identity(rank) or not maps[0].is_permutation:
        return None
    block = op.regions[0].blocks[0]
    body = list(_compat.block_ops(block))
    if (len(body) != 1 or body[0].name != "linalg.yield"
            or body[0].operands[0] != block.arguments[0]):
        return None
    loop_of = [ir.AffineDimExpr(e).position for e in maps[0].results]
    perm = [0] * rank
    for j, dim in enumerate(loop_of):
        perm[dim] = j
    return perm


def _strides_after_reshape(sizes, strides, shape):
    """The strides of ``shape`` viewing the elements of a tensor of
    ``sizes`` and ``strides`` in row-major order, or None when no strides
    can (PyTorch's ``computeStride``: each run of dims the reshape merges or
    splits must be contiguous within itself)."""
    if not sizes or 0 in sizes:
        return None
    new = [0] * len(shape)
    view_d = len(shape) - 1
    base, tensor_numel, view_numel = strides[-1], 1, 1
    for d in range(len(sizes) - 1, -1, -1):
        tensor_numel *= sizes[d]
        if d == 0 or (sizes[d - 1] != 1 and strides[d - 1] != tensor_numel * base):
            while view_d >= 0 and (view_numel < tensor_numel or shape[view_d] == 1):
                new[view_d] = view_numel * base
                view_numel *= shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if d > 0:
                base, tensor_numel, view_numel = strides[d - 1], 1, 1
    return new if view_d == -1 else None


def _layout_over(chain, steps, j):
    """(sizes, strides) of ``chain[0]`` as a view of ``chain[j]``'s elements
    (row-major), following ``steps`` (``steps[i]``: how ``chain[i]`` is
    made of ``chain[i + 1]``), or None when a reshape on the way is no view."""
    return _chain_layout(chain, steps, j, inverse=False)


def _chain_layout(chain, steps, j, inverse: bool):
    """``_layout_back`` (``inverse``: each permutation undone) and
    ``_layout_over`` (each applied)."""
    sizes = shape_of(chain[j])
    strides, acc = [0] * len(sizes), 1
    for i in range(len(sizes) - 1, -1, -1):
        strides[i], acc = acc, acc * sizes[i]
    for i in range(j - 1, -1, -1):
        perm = steps[i]
        if perm is not None:
            if inverse:
                back = [0] * len(perm)
                for t, p in enumerate(perm):
                    back[p] = t
                perm = back
            sizes, strides = [sizes[p] for p in perm], [strides[p] for p in perm]
            continue
        shape = shape_of(chain[i])
        strides = _strides_after_reshape(sizes, strides, shape)
        if strides is None:
            return None
        sizes = shape
    return sizes, strides


def _permuted_source(v, nbatch, batched):
    """``(tensor, order)``: a tensor holding ``v``'s elements as the dims
    (batch, rows, cols) of ``v`` (``v``'s ``nbatch`` leading dims merged
    into the batch; left out when not ``batched``) in the order ``order``
    (indices into that list), read in place by a kernel contraction: a
    reshape of the deepest tensor on ``v``'s chain of permutes and reshapes
    (``_view_step``) whose row-major elements ``v`` views as such a
    permutation, with unit stride along rows or cols.  None when only ``v``
    itself does, in its own order."""
    chain, steps = [v], []
    while len(chain) < 16:
        step = _view_step(chain[-1])
        if step is None or elt_of(step[0]) != elt_of(v):
            break
        chain.append(step[0])
        steps.append(step[1])
    for j in range(len(chain) - 1, 0, -1):
        layout = _layout_over(chain, steps, j)
        if layout is None:
            continue
        found = _as_permutation(*layout, nbatch, batched, numel(shape_of(chain[j])))
        if found is not None:
            order, shape = found
            return reshape(chain[j], shape), order
    return None


def _as_permutation(sizes, strides, nbatch, batched, total):
    """``(order, shape)``: the dims (batch, rows, cols) of a view of
    ``sizes`` and ``strides`` (its ``nbatch`` leading dims merged into the
    batch) that, in ``order``, are a row-major tensor of ``shape`` holding
    all ``total`` elements; None when they are not, when the batch dims do
    not merge, or when the unit-stride dim is the batch's."""
    lead = [(z, s) for z, s in zip(sizes[:nbatch], strides[:nbatch]) if z != 1]
    for (z0, s0), (z1, s1) in zip(lead, lead[1:]):
        if s0 != s1 * z1:
            return None
    dims = ([(numel([z for z, _ in lead]), lead[-1][1] if lead else 0)] if batched else [])
    dims += list(zip(sizes[nbatch:], strides[nbatch:]))
    real = sorted((i for i, (z, _) in enumerate(dims) if z != 1), key=lambda i: -dims[i][1])
    expect = 1
    for i in reversed(real):
        if dims[i][1] != expect:
            return None
        expect *= dims[i][0]
    if expect != total or (batched and real and real[-1] == 0):
        return None
    order = [i for i, (z, _) in enumerate(dims) if z == 1] + real
    return order, [dims[i][0] for i in order]


def _transposed_2d(v):
    """The source of ``v`` when ``v`` is a 2-D transpose (rlx.permute_dims
    not lowered yet, or the linalg.transpose it became), else None."""
    owner = _compat.defining_op(v)     # not v.owner: see _compat.linalg
    if owner is None:
        return None
    if owner.name == "rlx.permute_dims":
        axes = owner.attributes["axes"] if "axes" in owner.attributes else None
        if axes is None or [int(x) % 2 for x in ir.DenseI64ArrayAttr(axes)] == [1, 0]:
            return owner.operands[0]
    if owner.name == "linalg.transpose":
        if list(ir.DenseI64ArrayAttr(owner.attributes["permutation"])) == [1, 0]:
            return owner.operands[0]
    return None


def _matmul_in_place(a, b, a_t: bool, b_t: bool, out_shape, elt):
    """``linalg.matmul`` reading a transposed operand in place through its
    indexing map (``a`` is (K, M) when ``a_t``, ``b`` is (N, K) when ``b_t``)."""
    m, n, k = (ir.AffineDimExpr.get(i) for i in range(3))
    maps = [ir.AffineMap.get(3, 0, [k, m] if a_t else [m, k]),
            ir.AffineMap.get(3, 0, [n, k] if b_t else [k, n]),
            ir.AffineMap.get(3, 0, [m, n])]
    return linalg.matmul(a, b, outs=[filled(out_shape, elt, 0)],
                         indexing_maps=maps)


# --- weight gradients of batched dense layers: one 2-D matmul over the batch ---

def fold_batch_sums(module: ir.Operation) -> None:
    """``rlx.collapse_sum_to`` of a batched ``rlx.matmul`` to its 2-D
    (M, N) result (the gradient of a weight shared by every batch element:
    ``sum_b x_b^T @ dy_b``) becomes one 2-D matmul contracting the batch
    and K together: ``(M, B*K) @ (B*K, N)``.  The lhs is the reshape of
    ``a``'s (batch..., K, M) view read transposed (a ``permute_dims`` of a
    ``permute_dims`` composes; the forward activation itself when ``a`` is
    its last-two-axes transpose), the rhs ``b`` reshaped.  A result read
    only by a 2-D transpose (the weight of ``x @ W^T``) is computed
    transposed instead, ``(N, B*K) @ (B*K, M)``.  Before: B small matmuls
    into a (B, M, N) tensor, then its sum (the Transformer layer's
    projection weights: 128 matmuls of K = 8 into 100 MB, 16 ms, plus
    7.7 ms of sum; after, one 256x1024x768 kernel call).  Run on rlx ops,
    before the lowering patterns."""
    for op in _compat.collect_ops(module, lambda o: o.name == "rlx.collapse_sum_to"):
        mm = _compat.defining_op(op.operands[0])
        if mm is None or mm.name != "rlx.matmul" or len(_compat.uses_of(mm.results[0])) != 1:
            continue
        a, b = mm.operands
        sa, sb, so = shape_of(a), shape_of(b), shape_of(mm.results[0].type)
        target = shape_of(op.results[0].type)
        if (len(sa) < 3 or sa[:-2] != sb[:-2] or target != so[-2:] or 0 in so
                or elt_of(a) != elt_of(b) or numel(sa[:-2]) < 2):
            continue
        rank = len(sa)
        m, k, n = sa[-2], sa[-1], sb[-1]
        rows = numel(sa[:-2]) * k
        with ir.InsertionPoint(op), op.location:
            xt = _reshape_op(_permuted(a, list(range(rank - 2)) + [rank - 1, rank - 2]),
                             [rows, m])
            rhs = _reshape_op(b, [rows, n])
            users = _compat.uses_of(op.results[0])
            flip = (len(users) == 1 and users[0][0].name == "rlx.permute_dims"
                    and _is_2d_transpose(users[0][0]))
            if flip:
                out, result = users[0][0], _matmul_op(_transpose_op(rhs), xt, [n, m], mm)
            else:
                out, result = op, _matmul_op(_transpose_op(xt), rhs, [m, n], mm)
        out.results[0].replace_all_uses_with(result)
        if flip:
            out.erase()
        op.erase()
        mm.erase()
        _erase_unused(a)
        _erase_unused(b)


def _tensor(shape, elt) -> ir.Type:
    return ir.RankedTensorType.get(list(shape), elt)


def _reshape_op(v, shape):
    if shape_of(v) == list(shape):
        return v
    return ir.Operation.create("rlx.reshape", results=[_tensor(shape, elt_of(v))],
                               operands=[v]).results[0]


def _axes(op) -> list[int]:
    rank = len(shape_of(op.operands[0]))
    if "axes" not in op.attributes:
        return list(reversed(range(rank)))
    return [int(x) % rank for x in ir.DenseI64ArrayAttr(op.attributes["axes"])]


def _is_2d_transpose(op) -> bool:
    return len(shape_of(op.operands[0])) == 2 and _axes(op) == [1, 0]


def _permute_op(v, perm):
    shape = shape_of(v)
    return ir.Operation.create("rlx.permute_dims", results=[
        _tensor([shape[p] for p in perm], elt_of(v))], operands=[v], attributes={
        "axes": ir.DenseI64ArrayAttr.get(perm)}).results[0]


def _transpose_op(v):
    return _permute_op(v, [1, 0])


def _permuted(v, perm):
    """``permute_dims(v, perm)``, composed with ``v``'s own permute_dims
    (none when the two cancel)."""
    owner = _compat.defining_op(v)
    if owner is not None and owner.name == "rlx.permute_dims":
        inner = _axes(owner)
        perm, v = [inner[p] for p in perm], owner.operands[0]
    if perm == list(range(len(perm))):
        return v
    return _permute_op(v, perm)


def _matmul_op(a, b, shape, like):
    """A 2-D ``rlx.matmul`` carrying ``like``'s attributes (grad.recomputed)."""
    attrs = {named.name: named.attr for named in like.attributes}
    return ir.Operation.create("rlx.matmul", results=[_tensor(shape, elt_of(a))],
                               operands=[a, b], attributes=attrs).results[0]


def _erase_unused(v) -> None:
    """Erases ``v``'s producer when it is an rlx.permute_dims nothing reads."""
    owner = _compat.defining_op(v)
    if owner is not None and owner.name == "rlx.permute_dims" and \
            not _compat.uses_of(owner.results[0]):
        owner.erase()
