"""VJP and JVP rules of the upstream tensor ops that loop adjoints use to
record iteration states (``tensor.insert_slice`` into a stack,
``tensor.extract_slice`` out of it), so an adjoint with loops can be
differentiated again, in either mode.

Both ops are linear in their tensor operands: the JVP rules (after the VJP
rules; both take a batch) slice or insert the tangents with the same
offsets, sizes and strides, the batch dims in front taken whole.  Index
operands get no tangent; a zero (None) tangent of one of insert_slice's
tensors is a zeros tensor when the other has a tangent.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import tensor

from ...dialects import rlx
from . import jvp, vjp


def _slice_parts(op):
    """(dynamic offset/size/stride operands, static_offsets, sizes, strides)."""
    names = ("static_offsets", "static_sizes", "static_strides")
    static = [[int(x) for x in ir.DenseI64ArrayAttr(op.attributes[n])] for n in names]
    return static


def _zeros(t: ir.RankedTensorType) -> ir.Value:
    if not t.has_static_shape:
        raise NotImplementedError
    return rlx.zeros(list(t.shape), t.element_type)


@vjp("tensor.extract_slice")
def extract_slice(op, grads):
    (g,) = grads
    src = op.operands[0]
    dyn = list(op.operands)[1:]
    offs, sizes, strides = _slice_parts(op)
    st = ir.RankedTensorType(src.type)
    if not st.has_static_shape:
        return [None] + [None] * len(dyn)   # dynamic stacks: refused by the check
    back = tensor.InsertSliceOp(g, _zeros(st), dyn, [], [], offs, sizes, strides).result
    return [back] + [None] * len(dyn)


@vjp("tensor.insert_slice")
def insert_slice(op, grads):
    (g,) = grads
    src = op.operands[0]
    dyn = list(op.operands)[2:]
    offs, sizes, strides = _slice_parts(op)
    g_src = tensor.ExtractSliceOp(src.type, g, dyn, [], [], offs, sizes, strides).result
    g_dest = tensor.InsertSliceOp(_zeros(ir.RankedTensorType(src.type)), g, dyn, [], [],
                                  offs, sizes, strides).result
    return [g_src, g_dest] + [None] * len(dyn)


# --- JVP rules: the same slice of the tangent, with the batch dims in front
# taken whole (offset 0, full size, stride 1).  The dynamic index operands
# keep their order (offsets, sizes, strides), so they are passed on as they are.

def _dyn_split(op, first: int):
    """The dynamic offset, size and stride operands (operands from ``first``),
    split by the ``ShapedType`` dynamic marker in the static arrays."""
    kdyn = ir.ShapedType.get_dynamic_size()
    dyn = list(op.operands)[first:]
    out = []
    for static in _slice_parts(op):
        n = sum(1 for s in static if s == kdyn)
        out.append(dyn[:n])
        dyn = dyn[n:]
    return out


def _batched_parts(op, batch):
    offs, sizes, strides = _slice_parts(op)
    nb = len(batch)
    return [0] * nb + offs, list(batch) + sizes, [1] * nb + strides


def _with_batch(t: ir.Type, batch) -> ir.RankedTensorType:
    rt = ir.RankedTensorType(t)
    return ir.RankedTensorType.get(list(batch) + list(rt.shape), rt.element_type)


def _zero_tangent_of(v: ir.Value, batch) -> ir.Value:
    return _zeros(_with_batch(v.type, batch))


@jvp("tensor.extract_slice")
def extract_slice_jvp(op, tangents, batch):
    t = tangents[0]
    if t is None:
        return [None]
    d_offs, d_sizes, d_strides = _dyn_split(op, 1)
    offs, sizes, strides = _batched_parts(op, batch)
    return [tensor.ExtractSliceOp(_with_batch(op.results[0].type, batch), t, d_offs, d_sizes,
                                  d_strides, offs, sizes, strides).result]


@jvp("tensor.insert_slice")
def insert_slice_jvp(op, tangents, batch):
    t_src, t_dest = tangents[0], tangents[1]
    if t_src is None and t_dest is None:
        return [None]
    src, dest = op.operands[0], op.operands[1]
    if t_src is None:
        t_src = _zero_tangent_of(src, batch)
    if t_dest is None:
        t_dest = _zero_tangent_of(dest, batch)
    d_offs, d_sizes, d_strides = _dyn_split(op, 2)
    offs, sizes, strides = _batched_parts(op, batch)
    return [tensor.InsertSliceOp(t_src, t_dest, d_offs, d_sizes, d_strides,
                                 offs, sizes, strides).result]
