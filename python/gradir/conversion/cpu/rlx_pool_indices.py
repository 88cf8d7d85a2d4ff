"""rlx-pool-indices: a max pool and its backward on one input share the arg-max positions."""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from ... import _compat
from ...dialects import rlx
from ...dialects.infer import attributes_of, raw_attributes
from ...ir import walk
from ...passes.base import ModulePass, option

__all__ = ["RlxPoolIndices", "pool_geometry"]

_POOL, _BACKWARD = "rlx.max_pool2d", "rlx.max_pool2d_backward"
_WITH, _FROM = "rlx.max_pool2d_with_indices", "rlx.max_pool2d_indices_backward"
_KERNEL_TYPES = ("f32", "f64")


def pool_geometry(op) -> tuple:
    """A pool's options with Relax's defaults filled in: (pool size,
    strides, padding, dilation, ceil mode)."""
    a = attributes_of(op)
    size = list(a.get("pool_size", [1, 1]))
    return (tuple(size * 2 if len(size) == 1 else size), tuple(a.get("strides", [1, 1])),
            tuple(a.get("padding", [0, 0, 0, 0])), tuple(a.get("dilation", [1, 1])),
            bool(a.get("ceil_mode", False)))


def _kernel_pool(op) -> bool:
    """A pool the pooling kernels take (``linalg/pooling.py``: ``_kernel_pool``,
    ``_kernel_pool3``): f32/f64, 2x2 windows of stride 2 over an even input,
    or 3x3 windows of stride 2 and padding 1 over even rows and columns."""
    t = ir.RankedTensorType(op.operands[0].type)
    if str(t.element_type) not in _KERNEL_TYPES or t.rank != 4:
        return False
    size, strides, pad, dilation, ceil = pool_geometry(op)
    _, _, h, w = t.shape
    even = h % 2 == 0 and w % 2 == 0 and not ceil
    if size == (2, 2):
        return strides == (2, 2) and pad == (0, 0, 0, 0) and dilation == (1, 1) and even
    return (size == (3, 3) and strides == (2, 2) and pad == (1, 1, 1, 1)
            and dilation == (1, 1) and even)


@dataclass(frozen=True)
class RlxPoolIndices(ModulePass):
    """Saves a max pool's arg-max positions for its backward on the same input.

    A gradient program holds ``rlx.max_pool2d`` and, later,
    ``rlx.max_pool2d_backward`` of the same input with the same options:
    the backward finds each window's arg-max again.  This pass makes the
    forward ``rlx.max_pool2d_with_indices``, which also returns the
    positions (i32, the pooled shape), and each such backward it dominates
    ``rlx.max_pool2d_indices_backward``, which reads them instead of the
    input.  The positions are an rlx value: ``runtime/partition.py``, which
    cuts a large function at its top level before lowering, passes them
    between the parts like any other intermediate (bench/cnn.py's ResNet
    step: the stem pool's forward is in the first part, its backward in the
    second).  Same positions, same sums in the same order: the same bits.

        %y = "rlx.max_pool2d"(%x) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>}
            : (tensor<2x3x8x8xf32>) -> tensor<2x3x4x4xf32>
        ...
        %dx = "rlx.max_pool2d_backward"(%g, %x) {pool_size = array<i64: 2, 2>,
            strides = array<i64: 2, 2>} : (tensor<2x3x4x4xf32>, tensor<2x3x8x8xf32>)
            -> tensor<2x3x8x8xf32>
    becomes
        %y:2 = "rlx.max_pool2d_with_indices"(%x) {pool_size = array<i64: 2, 2>,
            strides = array<i64: 2, 2>} : (tensor<2x3x8x8xf32>)
            -> (tensor<2x3x4x4xf32>, tensor<2x3x4x4xi32>)
        ...
        %dx = "rlx.max_pool2d_indices_backward"(%g, %y#1) {pool_size = array<i64: 2, 2>,
            strides = array<i64: 2, 2>} : (tensor<2x3x4x4xf32>, tensor<2x3x4x4xi32>)
            -> tensor<2x3x8x8xf32>

    By default only the pools the CPU's pooling kernels take (f32/f64, 2x2
    of stride 2, 3x3 of stride 2 and padding 1, over even rows and columns:
    their forward saves the positions nearly for free); ``all-windows``:
    every max pool with such a backward (rlx-to-linalg's generic lowering
    then computes the positions in the forward).  A forward without such a
    backward, a backward the forward does not dominate (another function,
    before it) stay as they are.  ``overlapping``: only pools whose windows
    overlap (a stride smaller than the window along a dimension), whose
    backward would otherwise read each input element several times to find
    the arg-max again.

    Where it runs: on a program about to be cut in parts
    (``runtime/partition.py``), before the cut.  ``undo=true`` (what
    ``pipeline.lower_to_llvm`` runs with the kernels, on each part and on
    whole functions) turns a pair whose positions stay in one function back
    into ``max_pool2d`` and ``max_pool2d_backward``, which rlx-pool-kernels
    pairs on buffers with byte positions: faster than i32 ones (the ResNet
    stem pool's gradient, 32x32x32x32 f32, one thread: 0.700 ms against
    0.751), so the rlx value is kept only where a cut passes it on.  The cut
    runs the pass with ``overlapping=true``: a 2x2 pool of stride 2 finds
    its arg-max again from one read of each input element, cheaper than
    writing and reading i32 positions (bench/lenet.py's LeNet-5 step, batch
    64, both pools across the cut, AMD EPYC Zen 5 AVX-512, load 1, exported
    and paired in one process, median ms, positions -> recomputed: 2 threads
    0.913 -> 0.858 and 0.919 -> 0.863, 1 thread 1.174 -> 1.181 and 1.183 ->
    1.199; the pools alone, 64x6x24x24, min us, forward 19.6 plain, 42.8
    with positions, backward 60.6 recomputing, 43.0 from positions).

    Refused (an error at the op): ``rlx.max_pool2d_indices_backward`` of
    positions a ``rlx.max_pool2d_with_indices`` with other options made."""

    name = "rlx-pool-indices"

    all_windows: bool = option(False, "save the positions of every max pool with a backward on "
                                      "its input, not only of the pools the CPU's pooling "
                                      "kernels take")
    overlapping: bool = option(False, "only pools whose windows overlap (a stride smaller "
                                      "than the window; what runtime/partition.py's cut runs)")
    undo: bool = option(False, "instead, turn each max_pool2d_with_indices whose positions only "
                               "backwards in its own function read back into max_pool2d and "
                               "max_pool2d_backward (rlx-pool-kernels pairs those on buffers)")

    def apply(self, module: ir.Operation) -> None:
        ops = [op for op in walk(module.operation) if op.name in (_POOL, _BACKWARD, _FROM)]
        bad = [op for op in ops if op.name == _FROM and _mismatch(op)]
        for op in bad:
            self.error(op, f"'{_FROM}' op reads the positions of a '{_WITH}' with other "
                           f"options ({_mismatch(op)})")
        if bad:
            raise self.failure()
        if self.undo:
            for op in [op for op in walk(module.operation) if op.name == _WITH]:
                _undo(op)
            return
        order = {_compat.op_key(op): n for n, op in enumerate(ops)}
        backwards = [op for op in ops if op.name == _BACKWARD]
        taken = set()
        for fwd in [op for op in ops if op.name == _POOL]:
            if not (self.all_windows or _kernel_pool(fwd)):
                continue
            if self.overlapping and not _overlapping(fwd):
                continue
            x, geometry = fwd.operands[0], pool_geometry(fwd)
            mine = [b for b in backwards if _compat.op_key(b) not in taken
                    and b.operands[1] == x and pool_geometry(b) == geometry
                    and order[_compat.op_key(fwd)] < order[_compat.op_key(b)]
                    and _dominates(fwd, b)]
            if not mine:
                continue
            idx = _with_indices(fwd)
            for b in mine:
                taken.add(_compat.op_key(b))
                _from_indices(b, idx)


def _overlapping(op) -> bool:
    """Whether the pool's windows overlap along a dimension (stride < the
    window's dilated extent)."""
    size, strides, _, dilation, _ = pool_geometry(op)
    return any(s < (k - 1) * d + 1 for k, s, d in zip(size, strides, dilation))


def _mismatch(op) -> str | None:
    """How ``op``'s options differ from those of the op that made its
    positions (None when they agree, or when no ``_WITH`` made them)."""
    owner = _compat.defining_op(op.operands[1])
    if owner is None or owner.name != _WITH:
        return None
    mine, theirs = pool_geometry(op), pool_geometry(owner)
    if mine == theirs:
        return None
    names = ("pool_size", "strides", "padding", "dilation", "ceil_mode")
    return ", ".join(f"{n} {a} against {b}" for n, a, b in zip(names, mine, theirs) if a != b)


def _dominates(fwd, bwd) -> bool:
    """Whether ``bwd`` is after ``fwd`` in its block or nested in an op after it."""
    block = fwd.operation.block
    op = bwd.operation
    while op.block != block:
        op = _compat.parent_op(op)
        if op is None or op.name in ("func.func", "builtin.module"):
            return False
    return True


def _with_indices(fwd):
    """Replaces ``fwd`` by ``rlx.max_pool2d_with_indices``; its positions."""
    with ir.InsertionPoint(fwd), fwd.location:
        new = rlx.build_op(_WITH, [fwd.operands[0]], raw_attributes(fwd))
    fwd.results[0].replace_all_uses_with(new.results[0])
    fwd.erase()
    return new.results[1]


def _undo(fwd) -> None:
    """``fwd`` (``_WITH``) and the ``_FROM`` reading its positions back to
    ``_POOL`` and ``_BACKWARD`` of its input, when only such ops in its
    function read them (not a function's result: a part of a cut function
    passing them on)."""
    idx = fwd.results[1]
    users = [u for u, _ in _compat.uses_of(idx)]
    if any(u.name != _FROM or u.operands[1] != idx for u in users):
        return
    x = fwd.operands[0]
    for bwd in users:
        with ir.InsertionPoint(bwd), bwd.location:
            new = rlx.build_op(_BACKWARD, [bwd.operands[0], x], raw_attributes(bwd))
        bwd.results[0].replace_all_uses_with(new.results[0])
        bwd.erase()
    with ir.InsertionPoint(fwd), fwd.location:
        new = rlx.build_op(_POOL, [x], raw_attributes(fwd))
    fwd.results[0].replace_all_uses_with(new.results[0])
    fwd.erase()


def _from_indices(bwd, idx) -> None:
    with ir.InsertionPoint(bwd), bwd.location:
        new = rlx.build_op(_FROM, [bwd.operands[0], idx], raw_attributes(bwd),
                           result=bwd.results[0].type)
    bwd.results[0].replace_all_uses_with(new.results[0])
    bwd.erase()
