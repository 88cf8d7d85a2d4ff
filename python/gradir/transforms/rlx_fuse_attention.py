"""rlx-fuse-attention: attention over blocks of query rows, scores never whole."""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, scf, tensor

from ..ir import walk
from ..passes.base import ModulePass, option

__all__ = ["RlxFuseAttention", "attention_block_rows"]

# The elementwise ops that may stand between the scores and the softmax (a
# scale, a mask added or selected, a soft cap): each result row depends on
# the same row of its operands only, so a block of rows is computed alone.
_ROWWISE = frozenset(
    "rlx." + n for n in (
        "negative exp log sqrt rsqrt sin cos tanh sigmoid abs relu silu gelu erf square "
        "add subtract multiply divide power maximum minimum where").split())

_ELEMENT_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8}


def attention_block_rows(rows: int, cols: int, element_bytes: int,
                         cache_bytes: int) -> int | None:
    """The query rows per block for a score matrix ``rows`` x ``cols`` of
    ``element_bytes`` elements per (batch, head), or None when the whole
    matrix fits in ``cache_bytes`` (nothing to fuse).

    The most rows whose scores fit (at least 1); a divisor of ``rows`` when
    one is at least half that (no tail block), else that many rows and a
    smaller tail block."""
    row_bytes = cols * element_bytes
    if rows * row_bytes <= cache_bytes or rows < 2:
        return None
    fit = max(1, cache_bytes // row_bytes)
    divisor = max(d for d in range(1, fit + 1) if rows % d == 0)
    return divisor if 2 * divisor >= fit else fit


@dataclass(frozen=True)
class RlxFuseAttention(ModulePass):
    """Computes attention over blocks of query rows when its score matrix does not fit in cache.

    Attention as the PyTorch importer writes it (``F.scaled_dot_product_attention``,
    ``nn.MultiheadAttention``, and the same ops written by hand) is
    ``matmul(softmax(f(matmul(q, kt))), v)``: ``f`` a chain of elementwise
    ops (a scale, an added or selected mask, a soft cap), the softmax over
    the last axis.  When the scores of one (batch, head), ``seq_q x seq_k``
    elements, are over ``cache-bytes``, and the scores, every value of the
    chain and the softmax have no other use, the pass rewrites these ops
    into an ``scf.for`` over blocks of query rows: each iteration slices its
    rows of ``q`` (and of every mask operand with a row axis), computes the
    block's scores, ``f``, softmax and product with ``v``, and inserts the
    rows into the result.  The softmax is exact: a block holds whole rows,
    so no online rescaling is needed, and each row goes through the unfused
    program's ops (the interpreter's results agree to 1e-14 in f64: a
    smaller matmul may round differently).  The largest score matrix alive
    is one block's: ``rows x seq_k`` per (batch, head) instead of ``seq_q x
    seq_k`` (a block holds every batch and head of its rows).

    Block rows: the most rows whose scores of one (batch, head) fit in
    ``cache-bytes`` (at least 1); a divisor of ``seq_q`` if one is at least
    half that, else that many rows and a ragged last block computed after
    the loop on static slices.  ``cache-bytes`` defaults to 524288 (512 KiB,
    half the 1 MiB L2 cache of a Zen 5 core, all of a Zen 3 core's), a
    fixed number, so the output does not depend on the machine it runs on.

    The loop is ordinary input to ``rlx-gradient`` (``scf.for``,
    ``tensor.extract_slice``/``insert_slice``): run this pass before it.
    The block's backward recomputes its scores from the sliced ``q``.

        %kt = "rlx.permute_dims"(%k) {axes = array<i64: 0, 1, 3, 2>} : ...
        %s = "rlx.matmul"(%q, %kt) : (tensor<1x8x4096x64xf32>, tensor<1x8x64x4096xf32>)
               -> tensor<1x8x4096x4096xf32>
        %a = "rlx.multiply"(%s, %scale) : ...
        %m = "rlx.add"(%a, %mask) : (tensor<1x8x4096x4096xf32>, tensor<4096x4096xf32>) -> ...
        %p = "rlx.softmax"(%m) {axis = array<i64: -1>} : ...
        %o = "rlx.matmul"(%p, %v) : (..., tensor<1x8x4096x64xf32>) -> tensor<1x8x4096x64xf32>
    becomes (32 rows x 4096 x 4 bytes = 512 KiB)
        %init = tensor.empty() : tensor<1x8x4096x64xf32>
        %o = scf.for %i = %c0 to %c4096 step %c32 iter_args(%acc = %init) -> (...) {
          %qb = tensor.extract_slice %q[0, 0, %i, 0] [1, 8, 32, 64] [1, 1, 1, 1] : ...
          %mb = tensor.extract_slice %mask[%i, 0] [32, 4096] [1, 1] : ...
          %sb = "rlx.matmul"(%qb, %kt) : (...) -> tensor<1x8x32x4096xf32>
          %ab = "rlx.multiply"(%sb, %scale) : ...
          %mb2 = "rlx.add"(%ab, %mb) : ...
          %pb = "rlx.softmax"(%mb2) {axis = array<i64: -1>} : ...
          %ob = "rlx.matmul"(%pb, %v) : (...) -> tensor<1x8x32x64xf32>
          %r = tensor.insert_slice %ob into %acc[0, 0, %i, 0] [1, 8, 32, 64] [1, 1, 1, 1] : ...
          scf.yield %r : tensor<1x8x4096x64xf32>
        }

    Left as they are: score matrices that fit, a softmax (or score, or
    chain value) with another use, a softmax over another axis, chain ops
    that broadcast the scores to a larger shape, 1-D operands.

    Measured (bench/attention.py: q, k, v of 1 x 8 heads x seq x 64, f32,
    one thread, AMD EPYC Zen 5, load 8 on 2 cores; unfused -> fused, ms and
    peak MiB): seq 1024 forward 46.4 -> 34.3 ms, 66 -> 10 MiB; gradient
    (vjp wrt q, k, v) 237 -> 174 ms, 140 -> 42 MiB; seq 4096 forward 2351 ->
    922 ms (PyTorch's flash kernel 917), 1056 -> 12 MiB; gradient 8503 ->
    7677 ms, 2096 -> 1036 MiB.  The gradient's cost grows with the number of
    blocks: rlx-gradient's loop adjoint keeps the loop's output at every
    iteration (1 GiB at seq 4096, unused by its backward) and accumulates
    q's gradient into a whole zero-padded tensor per block; at seq 4096
    ``cache-bytes=8388608`` (8 blocks of 512 rows) measured 717 ms forward
    and 3780 ms gradient against 871 and 7212 at the default (load 8).
    """

    name = "rlx-fuse-attention"
    anchor = None
    cache_bytes: int = option(524288, "bytes of one (batch, head)'s score block; attention "
                                      "whose whole score matrix is larger is computed in "
                                      "blocks of query rows that fit")

    def check_options(self) -> None:
        if self.cache_bytes < 1:
            raise self.bad_option("cache-bytes", "be a positive number of bytes",
                                  self.cache_bytes)

    def apply(self, module: ir.Operation) -> None:
        module = module.operation
        found, claimed = [], set()
        for op in walk(module):
            if op.name != "rlx.matmul":
                continue
            match = _match(op, self.cache_bytes)
            if match is None:
                continue
            ops = [match.first, match.softmax, match.second] + match.chain
            if any(o in claimed for o in ops):   # one attention's output, another's scores
                continue
            claimed.update(ops)
            found.append(match)
        for match in found:
            _rewrite(match)


@dataclass
class _Attention:
    first: ir.Operation         # matmul(q, kt): the scores
    chain: list                 # the elementwise ops after it, in order
    softmax: ir.Operation
    second: ir.Operation        # matmul(softmax, v)
    rows: int                   # seq_q
    block: int                  # query rows per block


def _owner(value: ir.Value):
    owner = value.owner
    if isinstance(owner, ir.Block):
        return None
    return owner.operation


def _only_used_by(value: ir.Value, user: ir.Operation) -> bool:
    uses = [u.owner for u in value.uses]
    return bool(uses) and all(getattr(u, "operation", u) == user for u in uses)


def _shape(value: ir.Value):
    t = value.type
    if not isinstance(t, ir.RankedTensorType) or not t.has_static_shape:
        return None
    return list(t.shape)


def _last_axis(softmax: ir.Operation, rank: int) -> bool:
    if "axis" not in softmax.attributes:
        return True
    try:
        axes = [int(a) for a in ir.DenseI64ArrayAttr(softmax.attributes["axis"])]
    except ValueError:          # not an array<i64>: rlx-verify's to report
        return False
    return len(axes) == 1 and axes[0] in (-1, rank - 1)


def _same_block(ops) -> bool:
    """Whether ``ops`` have one result each and sit in one block (the loop
    replaces them where the last one is: scores made outside a loop whose
    body takes their softmax stay there)."""
    block = ops[0].block
    return all(op.block == block and len(op.results) == 1 for op in ops)


def _scores_chain(value: ir.Value, user: ir.Operation, scores_type: ir.Type, depth: int = 0):
    """(first matmul, chain ops in program order) when ``value``, used only
    by ``user``, comes from ``matmul`` through row-wise ops of the scores'
    type whose values have no other use; else None."""
    op = _owner(value)
    if op is None or depth > 64 or value.type != scores_type or not _only_used_by(value, user):
        return None
    if op.name == "rlx.matmul":
        return (op, []) if len(op.operands) == 2 else None
    if op.name not in _ROWWISE:
        return None
    for operand in op.operands:
        found = _scores_chain(operand, op, scores_type, depth + 1)
        if found is not None:
            return found[0], found[1] + [op]
    return None


def _match(second: ir.Operation, cache_bytes: int) -> _Attention | None:
    if len(second.operands) != 2 or len(second.results) != 1:
        return None
    probs, v = second.operands
    softmax = _owner(probs)
    if softmax is None or softmax.name != "rlx.softmax" or v == probs \
            or len(softmax.operands) != 1:
        return None
    p_shape, v_shape, o_shape = _shape(probs), _shape(v), _shape(second.results[0])
    if p_shape is None or v_shape is None or o_shape is None:
        return None
    if len(p_shape) < 2 or len(v_shape) < 2 or not _last_axis(softmax, len(p_shape)):
        return None
    if not _only_used_by(probs, second):
        return None
    scores_type = softmax.operands[0].type
    found = _scores_chain(softmax.operands[0], softmax, scores_type)
    if found is None:
        return None
    first, chain = found
    if not _same_block([first, *chain, softmax, second]):
        return None
    q, kt = first.operands
    q_shape, kt_shape = _shape(q), _shape(kt)
    if q_shape is None or kt_shape is None or len(q_shape) < 2 or len(kt_shape) < 2:
        return None
    rows, cols = p_shape[-2], p_shape[-1]
    if q_shape[-2] != rows:
        return None
    elt = _ELEMENT_BYTES.get(str(ir.RankedTensorType(scores_type).element_type))
    if elt is None:
        return None
    block = attention_block_rows(rows, cols, elt, cache_bytes)
    if block is None:
        return None
    return _Attention(first, chain, softmax, second, rows, block)


# -- the rewrite ---------------------------------------------------------------

def _with_rows(t: ir.Type, rows: int) -> ir.RankedTensorType:
    t = ir.RankedTensorType(t)
    shape = list(t.shape)
    shape[-2] = rows
    return ir.RankedTensorType.get(shape, t.element_type)


def _slice_parts(shape, offset, rows):
    """(dynamic offsets, static offsets, sizes, strides) of rows
    ``offset .. offset + rows`` along axis -2."""
    dynamic = isinstance(offset, ir.Value)
    offsets = [0] * len(shape)
    offsets[-2] = ir.ShapedType.get_dynamic_size() if dynamic else offset
    sizes = list(shape)
    sizes[-2] = rows
    return ([offset] if dynamic else []), offsets, sizes, [1] * len(shape)


def _rows_of(x: ir.Value, offset, rows: int, total: int) -> ir.Value:
    """Rows ``offset .. offset + rows`` of ``x`` when its axis -2 is the
    query rows (``total`` of them); ``x`` itself when it broadcasts there."""
    shape = _shape(x)
    if shape is None or len(shape) < 2 or shape[-2] != total:
        return x
    dyn, offsets, sizes, strides = _slice_parts(shape, offset, rows)
    return tensor.ExtractSliceOp(_with_rows(x.type, rows), x, dyn, [], [], offsets, sizes,
                                 strides).result


def _clone(op: ir.Operation, operands, rows: int) -> ir.Value:
    attrs = op.attributes
    named = {attrs[i].name: attrs[i].attr for i in range(len(attrs))}
    return ir.Operation.create(op.name, results=[_with_rows(op.results[0].type, rows)],
                               operands=list(operands), attributes=named,
                               loc=op.location).result


def _block(m: _Attention, offset, rows: int) -> ir.Value:
    """The attention of query rows ``offset .. offset + rows``."""
    q, kt = m.first.operands
    with m.first.location:
        value = _clone(m.first, [_rows_of(q, offset, rows, m.rows), kt], rows)
    previous = m.first.results[0]
    for op in m.chain:
        with op.location:
            operands = [value if x == previous else _rows_of(x, offset, rows, m.rows)
                        for x in op.operands]
        value, previous = _clone(op, operands, rows), op.results[0]
    value = _clone(m.softmax, [value], rows)
    return _clone(m.second, [value, m.second.operands[1]], rows)


def _insert(block: ir.Value, into: ir.Value, offset, rows: int) -> ir.Value:
    dyn, offsets, sizes, strides = _slice_parts(_shape(into), offset, rows)
    return tensor.InsertSliceOp(block, into, dyn, [], [], offsets, sizes, strides).result


def _rewrite(m: _Attention) -> None:
    out = m.second.results[0]
    out_type = ir.RankedTensorType(out.type)
    full = m.rows - m.rows % m.block
    tail = m.rows - full
    index = ir.IndexType.get()
    with ir.InsertionPoint(m.second), m.second.location:
        lb = arith.ConstantOp(index, 0).result
        ub = arith.ConstantOp(index, full).result
        step = arith.ConstantOp(index, m.block).result
        init = tensor.EmptyOp(list(out_type.shape), out_type.element_type).result
        loop = scf.ForOp(lb, ub, step, [init])
        with ir.InsertionPoint(loop.body):
            iv = loop.induction_variable
            acc = loop.inner_iter_args[0]
            scf.YieldOp([_insert(_block(m, iv, m.block), acc, iv, m.block)])
        result = loop.results[0]
        if tail:
            result = _insert(_block(m, full, tail), result, full, tail)
    out.replace_all_uses_with(result)
    for op in [m.second, m.softmax] + m.chain[::-1] + [m.first]:
        op.erase()
