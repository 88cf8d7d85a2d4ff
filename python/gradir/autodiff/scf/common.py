"""Helpers of the control-flow adjoints: index arithmetic, trip counts, and
per-iteration stacks (``tensor<T x ...>`` written with ``tensor.insert_slice``
in the forward loop, read with ``tensor.extract_slice`` in the reverse one)."""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, tensor

from ...dialects import rlx

from ..gradient import GradientError, terminator
from ..regions import PREPARE, captured_values
from ..rules import is_float_type

__all__ = ["index_const", "static_index", "trip_count", "new_stack", "stack_push",
           "stack_get", "mark", "is_marked", "body_ops", "STACK_MARK", "RECORDED",
           "prepare_ops", "active_captured", "accumulate"]

# Unit attribute on the bookkeeping ops the recording loops add (stack writes,
# trip counters); dropped when the gradient is done.
STACK_MARK = "grad.stack"
# On a recording loop: how many of its results are the original loop's.
RECORDED = "grad.recorded"


def index_const(n: int) -> ir.Value:
    return arith.ConstantOp(ir.IndexType.get(), n).result


def static_index(v: ir.Value) -> int | None:
    """The value of an ``arith.constant`` index/integer, else None."""
    owner = v.owner
    if not isinstance(owner, ir.Operation):
        owner = getattr(owner, "operation", None)
    if owner is None or not isinstance(owner, ir.Operation) or owner.name != "arith.constant":
        return None
    attr = owner.attributes["value"]
    return int(ir.IntegerAttr(attr).value) if isinstance(attr, ir.IntegerAttr) else None


def mark(v_or_op) -> None:
    op = v_or_op.owner if isinstance(v_or_op, ir.Value) else v_or_op
    op = op.operation if hasattr(op, "operation") else op
    op.attributes[STACK_MARK] = ir.UnitAttr.get()


def is_marked(op: ir.Operation) -> bool:
    return STACK_MARK in op.attributes


def body_ops(block: ir.Block) -> list:
    """The ops of a loop/branch body without its terminator and bookkeeping."""
    ops = [o.operation for o in block.operations][:-1]
    return [o for o in ops if not is_marked(o)]


def trip_count(lb: ir.Value, ub: ir.Value, step: ir.Value):
    """(trips as an index Value, trips as an int or None) of ``scf.for``.

    A step known only at run time may be <= 0, which the loop itself
    refuses (the interpreter, the compiled code's run-time check): the count
    is then 0 and nothing divides by the step (a step of 0 was a division by
    zero: SIGSEGV in the compiled adjoint, "division by zero" instead of the
    loop's error in the interpreter)."""
    slb, sub, sst = static_index(lb), static_index(ub), static_index(step)
    if None not in (slb, sub, sst) and sst > 0:
        n = max(0, -((slb - sub) // sst))
        return index_const(n), n
    diff = arith.SubIOp(ub, lb).result
    divisor = step
    if sst is None:
        divisor = arith.MaxSIOp(step, arith.ConstantOp(step.type, 1).result).result
    n = arith.CeilDivSIOp(diff, divisor).result
    n = arith.MaxSIOp(n, index_const(0)).result
    if sst is None:
        positive = arith.CmpIOp(arith.CmpIPredicate.sgt, step,
                                arith.ConstantOp(step.type, 0).result).result
        n = arith.SelectOp(positive, n, index_const(0)).result
    return n, None


def iteration_index(iv: ir.Value, lb: ir.Value, step: ir.Value) -> ir.Value:
    """(iv - lb) / step, folded where lb = 0 and step = 1."""
    k = iv
    if static_index(lb) != 0:
        k = arith.SubIOp(k, lb).result
        mark(k)
    if static_index(step) != 1:
        k = arith.DivSIOp(k, step).result
        mark(k)
    return k


def _stack_type(t: ir.Type, n: int | None) -> ir.RankedTensorType:
    dyn = ir.ShapedType.get_dynamic_size()
    lead = dyn if n is None else n
    if isinstance(t, ir.RankedTensorType):
        return ir.RankedTensorType.get([lead] + list(t.shape), t.element_type)
    return ir.RankedTensorType.get([lead], t)


def check_storable(where, t: ir.Type) -> None:
    if isinstance(t, ir.RankedTensorType) and t.has_static_shape:
        return
    if isinstance(t, (ir.IndexType, ir.IntegerType, ir.F32Type, ir.F64Type)):
        return
    raise GradientError(where, f"cannot store loop-carried values of type {t} for the "
                               "backward (static-shape tensors and scalars only)")


def new_stack(t: ir.Type, trips: ir.Value, static: int | None) -> ir.Value:
    """An uninitialized ``tensor<rows x ...>`` (``static`` rows, else ``trips``)."""
    st = _stack_type(t, static)
    shape = list(t.shape) if isinstance(t, ir.RankedTensorType) else []
    return tensor.EmptyOp([trips if static is None else static] + shape,
                          st.element_type).result


def _slice_attrs(t: ir.RankedTensorType):
    dyn = ir.ShapedType.get_dynamic_size()
    rank = t.rank
    return ([dyn] + [0] * rank, [1] + list(t.shape), [1] * (rank + 1))


def _holds_nothing(stack_type: ir.Type, t: ir.Type) -> bool:
    """Whether a stack of ``t`` rows holds no element: ``t`` has none (a
    loop carries an empty tensor) or the stack has no row (a loop of no
    trip).  Its slices would have static offsets into a size-0 dimension,
    which MLIR's verifier refuses (hostile-input review)."""
    for shaped in (stack_type, t):
        if isinstance(shaped, ir.RankedTensorType) and 0 in ir.RankedTensorType(shaped).shape:
            return True
    return False


def stack_push(stack: ir.Value, v: ir.Value, k: ir.Value) -> ir.Value:
    """``stack`` with row ``k`` set to ``v``."""
    t = v.type
    if _holds_nothing(stack.type, t):
        return stack
    if isinstance(t, ir.RankedTensorType):
        offs, sizes, strides = _slice_attrs(ir.RankedTensorType(t))
        out = tensor.InsertSliceOp(v, stack, [k], [], [], offs, sizes, strides).result
    else:
        out = tensor.InsertOp(v, stack, [k]).result
    mark(out)
    return out


def stack_get(stack: ir.Value, k: ir.Value, t: ir.Type) -> ir.Value:
    """Row ``k`` of ``stack`` as a value of type ``t``."""
    if _holds_nothing(stack.type, t) and isinstance(t, ir.RankedTensorType) \
            and 0 in ir.RankedTensorType(t).shape:
        return tensor.EmptyOp(list(ir.RankedTensorType(t).shape),
                              ir.RankedTensorType(t).element_type).result
    if isinstance(t, ir.RankedTensorType):
        offs, sizes, strides = _slice_attrs(ir.RankedTensorType(t))
        return tensor.ExtractSliceOp(t, stack, [k], [], [], offs, sizes, strides).result
    return tensor.ExtractOp(stack, [k]).result


def terminator_of(block: ir.Block) -> ir.Operation:
    return terminator(block)


def prepare_ops(block: ir.Block, ops: list, active: set, values=None):
    """Runs the PREPARE hooks (loops among ``ops`` start recording).  With
    ``values``: also returns them with every result of a replaced op swapped
    for the replacement's (positions are found before anything is erased)."""
    where = None
    if values is not None:
        where = []
        for v in values:
            pos = None
            for i, op in enumerate(ops):
                res = list(op.results)
                if v in res:
                    pos = (i, res.index(v))
                    break
            where.append(pos)
    for prepare in PREPARE:
        ops = prepare(block, ops, active)
    if values is None:
        return ops
    return ops, [v if p is None else ops[p[0]].results[p[1]] for v, p in zip(values, where)]


def active_captured(op: ir.Operation, active: set) -> list:
    return [v for v in captured_values(op) if v in active and is_float_type(v.type)]


def _zero_filled_slice(a: ir.Value, t: ir.Type):
    """The ``tensor.insert_slice`` op making ``a`` when it writes into an
    ``rlx.zeros`` of type ``t`` (``tensor.extract_slice``'s adjoint), else None."""
    op = a.owner
    op = getattr(op, "operation", op)
    if not isinstance(op, ir.Operation) or op.name != "tensor.insert_slice" or a.type != t:
        return None
    dest = op.operands[1].owner
    dest = getattr(dest, "operation", dest)
    if not isinstance(dest, ir.Operation) or dest.name != "rlx.zeros":
        return None
    return op.opview


def _holds_slice(a: ir.Value, t: ir.Type) -> bool:
    """Whether ``a`` is a zero-filled slice or a single-use sum with one."""
    if _zero_filled_slice(a, t) is not None:
        return True
    op = a.owner
    op = getattr(op, "operation", op)
    if not isinstance(op, ir.Operation) or op.name != "rlx.add" or a.type != t:
        return False
    if sum(1 for _ in a.uses) > 1:
        return False
    return any(x.type == t and _holds_slice(x, t) for x in op.operands)


def accumulate(acc: ir.Value, a) -> ir.Value:
    """``acc + a`` for a loop's accumulated adjoint.  Where ``a`` is a slice
    written into zeros (``insert_slice %x into zeros``, the adjoint of an
    ``extract_slice``), or a sum of such slices, only the slices are added:
    ``insert_slice (extract_slice %acc + %x) into %acc``, so the
    accumulator is updated in place instead of a full-size add (and a
    full-size zeros) per iteration."""
    if a is None:
        return acc
    t = acc.type
    if not isinstance(t, ir.RankedTensorType) or not _holds_slice(a, t):
        return rlx.add(acc, a)
    ins = _zero_filled_slice(a, t)
    if ins is None:     # a single-use rlx.add of the same type
        x, y = a.owner.operands
        if x.type != t:
            return rlx.add(acc, a)
        return accumulate(accumulate(acc, x), y) if y.type == t else rlx.add(acc, a)
    x = ins.operands[0]
    offs, sizes, strides = list(ins.offsets), list(ins.sizes), list(ins.strides)
    static = [ins.attributes[n] for n in ("static_offsets", "static_sizes", "static_strides")]
    part = tensor.ExtractSliceOp(x.type, acc, offs, sizes, strides, *static).result
    total = rlx.add(part, x)
    return tensor.InsertSliceOp(total, acc, offs, sizes, strides, *static).result
