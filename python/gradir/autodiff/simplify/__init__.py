"""Simplification of generated gradients (rlx-simplify-gradient's engine).

Rule-based AD emits redundant IR: transposes of transposes, reductions of
broadcasts, multiplications by ones, additions of zeros, zero adjoints
flowing through linear ops.  ``simplify_function`` rewrites one
``func.func`` with Python patterns (``fn(op, rewriter)``, MLIR's greedy
driver through ``_compat.apply_patterns_configured``), then merges
duplicates (rlx-cse) and removes dead ops (rlx-dce), and repeats until
nothing changes.

The patterns, by module:
- ``transpose``: TVM's gradient simplifier (``permute_dims`` of
  ``permute_dims``, ``transpose(matmul(a, b))`` ->
  ``matmul(transpose(b), transpose(a))``), identity permutations and
  permutations of size-1 axes;
- ``shape``: identity reshape/broadcast_to/astype, reshape and broadcast
  chains, ``sum``/``mean``/``collapse_sum_to`` of a broadcast over its
  broadcast axes, reductions of size-1 axes;
- ``algebra``: ``x * 1``, ``x + 0``, ``x - 0``, ``0 - x``, negations,
  symbolic zeros, constant folding of zeros/ones/full, implicit
  broadcasting of operands; ``sum(matmul(a, b))`` and matmuls with a splat
  operand as row/column sums (no GEMM); factors the same along every summed
  axis moved out of ``collapse_sum_to`` (a batch norm's gradient);
- ``concat``: ``add`` of two ``concat``s whose non-zero pieces are disjoint
  -> one ``concat`` (the zero-padded adjoints of slices that cover a value:
  a Transformer's q, k, v cut from one projection).

Every pattern keeps the types of the values it replaces, creates no more
ops than it removes (except ``algebra.sum_of_matmul`` and
``algebra.matmul_of_splat``, which trade a contraction for a few O(n^2)
reductions, and ``algebra.factor_out_of_sum``, which trades a reduction of
a full-size product for a multiply of the result's size), and leaves
``grad.recomputed`` ops (checkpointing's rematerialised values) unmerged
with forward ones.
"""

from __future__ import annotations

import contextlib
import gc

from mlir import ir

from ... import _compat
from ..cleanup import cse, erase_dead_ops
from . import algebra, concat, shape, transpose
from ._driver import simplify_block
from ._mirror import Mirror, Unsupported

__all__ = ["simplify_function", "PATTERNS", "count_ops", "paused_gc"]

# The patterns wrap many ops (``value.owner``): make that cheap.
_compat.skip_dialect_module_lookup(("rlx", "grad"))

PATTERNS = transpose.PATTERNS + shape.PATTERNS + algebra.PATTERNS + concat.PATTERNS

# Rounds of (patterns, cse, dce); each round that changes nothing ends it.
MAX_ROUNDS = 8


def count_ops(fn: ir.Operation) -> int:
    """Ops in ``fn``'s body, the terminator excluded."""
    return sum(max(len(list(block.operations)) - 1, 0)
               for region in fn.regions for block in region.blocks)


@contextlib.contextmanager
def paused_gc():
    """Pauses Python's cyclic garbage collector: its full collections walk
    every live object, so a pass that builds tens of thousands of objects
    (the mirror, the adjoint tables) would pay for them again and again
    (time per op growing with the function).  Refcounting still frees
    everything acyclic; the collector runs again afterwards."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def simplify_function(fn: ir.Operation, patterns=None, *, engine: str = "auto",
                      dce_first: bool = False, records=None) -> None:
    """Simplifies one func.func in place (see the module docstring).

    ``engine``: ``"worklist"`` (gradir's own driver, ``_driver``: the same
    rewrites in the same order as MLIR's greedy driver, without retrying ops
    nothing changed around), ``"greedy"`` (MLIR's greedy driver, then rlx-cse
    and rlx-dce over the function), or ``"auto"``: the worklist driver for a
    straight-line body of rlx/grad ops with the default patterns, else greedy.
    The worklist driver mirrors the ops patterns build through
    ``_facts.Rewrite`` only: other patterns need ``engine="greedy"``.
    ``dce_first``: first erase the dead ops (``cleanup.erase_dead_ops``), as
    rlx-gradient does before simplifying.  ``records``: what
    ``rlx.recording()`` gathered while the function's ops were built (the
    worklist driver then reads those ops from it instead of from MLIR)."""
    fn = fn.operation
    if engine not in ("auto", "worklist", "greedy"):
        raise ValueError(f"unknown simplifier engine '{engine}'")
    worklist = engine == "worklist" or (engine == "auto" and patterns is None)
    if worklist and len(fn.regions) == 1 and len(fn.regions[0].blocks) == 1:
        try:
            mirror = Mirror(fn.regions[0].blocks[0], records)
        except Unsupported:
            mirror = None
        if mirror is not None:
            with fn.context, fn.location, paused_gc():
                simplify_block(mirror, PATTERNS if patterns is None else patterns, MAX_ROUNDS,
                               dce_first=dce_first)
            return
    if engine == "worklist":
        raise ValueError("the worklist driver needs one block of rlx, grad, arith.constant, "
                         "func.call and func.return ops")
    fired = [0]

    def counted(pattern):
        def run(op, rewriter):
            failed = pattern(op, rewriter)
            if not failed:
                fired[0] += 1
            return failed
        return run

    if dce_first:
        for region in fn.regions:
            for block in region.blocks:
                erase_dead_ops(block)
    table = [(root, counted(p)) for root, p in (PATTERNS if patterns is None else patterns)]
    with fn.context, fn.location:
        for _ in range(MAX_ROUNDS):
            fired[0] = 0
            before = count_ops(fn)
            _compat.apply_patterns_configured(fn, table)
            cse(fn)
            for region in fn.regions:
                for block in region.blocks:
                    erase_dead_ops(block)
            if not fired[0] and count_ops(fn) == before:
                break
