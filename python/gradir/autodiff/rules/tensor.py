"""VJP rules of the upstream tensor ops that loop adjoints use to record
iteration states (``tensor.insert_slice`` into a stack, ``tensor.extract_slice``
out of it), so an adjoint with loops can be differentiated again."""

from __future__ import annotations

from mlir import ir
from mlir.dialects import tensor

from ...dialects import rlx
from . import vjp


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
