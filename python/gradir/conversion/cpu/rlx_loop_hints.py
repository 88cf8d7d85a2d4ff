"""rlx-loop-hints: LLVM loop metadata on the loops of the lowered code, so
LLVM does not redo what the MLIR schedule already did (unrolling)."""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Literal

from mlir import ir

from ... import _compat
from ...ir import functions
from ...passes.base import ModulePass, option

__all__ = ["RlxLoopHints", "HINTS"]

HINTS = ("unroll", "vectorize")

_BRANCHES = ("llvm.br", "llvm.cond_br")


@dataclass(frozen=True)
class RlxLoopHints(ModulePass):
    """Marks the loops of the LLVM-dialect functions with ``llvm.loop`` metadata
    that disables the LLVM loop transforms named in ``disable``.

    The transform schedule already unrolled the register tiles of matmuls and
    vectorized elementwise loops by whole vector registers; LLVM's
    ``LoopUnroll``/``LoopFullUnroll`` then unrolled those loops again, which
    costs compile time and gives nothing back.  Measured on the LeNet-5
    gradient step (AMD EPYC Zen 5, AVX-512; ``bench/compile_time.py``): LLVM
    optimize + code generation 1.53 s -> 0.78 s, the step's run time
    unchanged (2.25 vs 2.27 ms); MLP step 0.25 -> 0.15 s (1.06 vs 1.03 ms).

    A loop is recognized by its back edge: a branch whose successor does not
    come after the branch's own block in the region (the structured lowering
    of ``scf.for``/``scf.while``/vector loops puts every loop header before
    its body), in the function's body and in the regions of ops nested in
    it (the ``omp.parallel``/``omp.wsloop`` of multi-threaded code).  A
    branch that already has a ``loop_annotation`` keeps it.

    Left to LLVM when ``unroll`` is disabled (issue 14): an innermost loop
    with no vector op whose header compares its induction variable with a
    constant of at most ``SMALL_TRIPS`` (8): the windows of convolutions and
    pools, the small loops the schedule leaves scalar, which LLVM unrolls
    fully.  LeNet step, one process, 3 compiles and 30 interleaved runs each
    (AMD EPYC Zen 5, AVX-512): 1 thread 1.975 -> 1.755 ms, compile 0.457 ->
    0.482 s (bounds up to 16: the same run time, more compile time; 24:
    1.886 ms).  Before this, loops in OpenMP regions went unmarked and were
    all LLVM's: at 2 threads the step compiled in 0.74 s against 0.67 s now
    (alternating fresh processes), at the same run time.  The loop LLVM's
    OpenMP translation makes for a small ``omp.loop_nest`` (at most
    ``SMALL_NEST`` ops) gets an empty inline-asm statement instead (see
    ``_no_unroll_workshare_loops``).

        llvm.br ^bb1(%7 : i64)
    becomes
        llvm.br ^bb1(%7 : i64) {loop_annotation = #llvm.loop_annotation<unroll = <disable = true>>}
    """

    name = "rlx-loop-hints"
    disable: tuple[Literal["unroll", "vectorize"], ...] = option(
        ("unroll",), "the LLVM loop transforms to turn off (unroll: LoopUnroll and "
                     "LoopFullUnroll; vectorize: LoopVectorize and interleaving)")

    def apply(self, module: ir.Operation) -> None:
        if not self.disable:
            return
        parts = []
        if "unroll" in self.disable:
            parts.append("unroll = <disable = true>")
        if "vectorize" in self.disable:
            parts.append("vectorize = <disable = true>")
        # In a builtin array, so that it never reaches Python (see _compat.set_attribute_from).
        annotation = ir.Attribute.parse(f"[#llvm.loop_annotation<{', '.join(parts)}>]")
        back_edges, nests = [], []
        for fn in functions(module, "llvm.func", nested=True):
            # one walk per function finds the regions to look at and the
            # omp.loop_nest ops (issue 14, compile time: a walk of the
            # LeNet step's lowered module is ~10 ms of Python)
            edges, nested = _back_edges(fn, leave_small="unroll" in self.disable)
            back_edges += edges
            nests += [op for op in nested if op.name == "omp.loop_nest"]
        _compat.set_attribute_from(back_edges, "loop_annotation", annotation)
        if "unroll" in self.disable:
            _no_unroll_workshare_loops(module, nests)


# The OpenMP translation (OpenMPIRBuilder) makes the loop of each
# ``omp.loop_nest`` itself, with no metadata of ours; on CPUs whose
# scheduling model has a loop buffer (AMD Zen), LLVM unrolls such a loop
# partially with a run-time trip count whenever its body (the whole nest
# inside) is small: the nest twice, plus a remainder.  LLVM's cost model
# does not unroll a loop that holds a call, so the body of each small
# work-sharing loop (at most ``SMALL_NEST`` ops, nested ones included)
# starts with an empty inline-asm statement (no instruction emitted).
# LeNet-5 step at 2 threads (AMD EPYC Zen 5, AVX-512): the 9 nests of
# 30-66 ops were unrolled (those of 166-348 ops, and the MLP step's of
# 158-402, were not); opt + llc 0.59 -> 0.54 s, object 45 -> 40 KB; whole
# compile 0.62 -> 0.57 s; run time 0.5-1% slower (one process, interleaved:
# hot workers 1.212 / 1.221 ms, cold 2.210 / 2.233).  (On the larger nests the
# statement changed register allocation, so they are left as they were.)
SMALL_NEST = 128
_NO_UNROLL = """llvm.func @f() {
  llvm.inline_asm has_side_effects "", "" : () -> ()
  llvm.return
}"""


def _no_unroll_workshare_loops(module: ir.Operation, nests: list[ir.Operation]) -> None:
    """Starts the body of each small ``omp.loop_nest`` of ``nests`` (in
    ``module``) with an empty inline-asm statement, so that LLVM does not
    unroll its loop."""
    if not nests:
        return
    scratch = ir.Module.parse(_NO_UNROLL, module.context)
    marker = _compat.collect_ops(scratch.operation, lambda o: o.name == "llvm.inline_asm")[0]
    for nest in nests:
        if _compat.count_ops(nest, SMALL_NEST) > SMALL_NEST:
            continue
        first = _compat.block_ops(nest.regions[0].blocks[0])[0]
        if first.name == "llvm.inline_asm":
            continue                     # already there (the pass run twice)
        _compat.clone_before(marker, first)


# Ops of vector code only, and ops that are vector code when their value is a vector.
_VECTOR_ONLY = frozenset(("llvm.shufflevector", "llvm.insertelement", "llvm.extractelement",
                          "llvm.intr.masked.load", "llvm.intr.masked.store"))
_MAYBE_VECTOR = frozenset(("llvm.load", "llvm.store", "llvm.intr.fmuladd", "llvm.intr.fma"))
# Innermost scalar loops with at most this many iterations are LLVM's to unroll.
SMALL_TRIPS = 8


def _back_edges(fn: ir.Operation, leave_small: bool = True
                ) -> tuple[list[ir.Operation], list[ir.Operation]]:
    """The branches of ``fn`` that close a loop to mark and have no
    annotation yet, and the ops nested in ``fn`` that are not LLVM ops
    (OpenMP's: their regions were searched too).  Blocks, their successors
    and the ops of a few blocks only: no op is wrapped for Python but
    those, as plain ``ir.Operation``s (wrapping an LLVM op imports
    mlir.dialects.llvm, 11 ms; issue 14, compile time)."""
    found = _region_back_edges(fn.regions[0], leave_small)
    others = _compat.collect_ops(fn, lambda o: not o.name.startswith("llvm."))
    for op in others:
        for region in op.regions:
            found += _region_back_edges(region, leave_small)
    return found, others


def _small_trip_count(header: ir.Block) -> bool:
    """``header`` starts with ``icmp %iv, %c`` (``%iv`` its first argument,
    ``%c`` a constant in 1..SMALL_TRIPS)."""
    if len(header.arguments) == 0:
        return False
    ops = _compat.block_ops(header)
    if not ops or ops[0].name != "llvm.icmp":
        return False
    iv, bound = ops[0].operands[0], ops[0].operands[1]
    if iv != header.arguments[0]:
        return False
    const = _compat.defining_op(bound)
    if const is None or const.name != "llvm.mlir.constant" or "value" not in const.attributes:
        return False
    value = const.attributes["value"]
    if not isinstance(value, ir.IntegerAttr):
        return False
    return 0 < value.value <= SMALL_TRIPS


def _vector_code(blocks) -> bool:
    """A vector op in one of ``blocks``."""
    for block in blocks:
        for op in _compat.block_ops(block):
            name = op.name
            if name in _VECTOR_ONLY or (name in _MAYBE_VECTOR and _compat.value_is_vector(
                    op, 0, operand=name == "llvm.store")):
                return True
    return False


def _region_back_edges(region: ir.Region, leave_small: bool) -> list[ir.Operation]:
    """The back edges of ``region`` to mark (``leave_small``: not those of
    short innermost scalar loops)."""
    blocks = list(region.blocks)     # none for a declaration
    if len(blocks) < 2:
        return []
    order = {block: i for i, block in enumerate(blocks)}
    loops = []      # (header index, latch index, latch)
    for i, block in enumerate(blocks):
        headers = [order[succ] for succ in block.successors if order.get(succ, i + 1) <= i]
        if headers:
            loops.append((min(headers), i, block))
    latches = [i for _, i, _ in loops]      # ascending
    found = []
    for h, i, latch in loops:
        if leave_small and _small_trip_count(blocks[h]):
            # innermost: no other latch inside [h, i) (structured lowering:
            # loops nest as intervals of the block order)
            holds_loop = bisect.bisect_left(latches, h) < bisect.bisect_left(latches, i)
            if not holds_loop and not _vector_code(blocks[h:i + 1]):
                continue
        term = _compat.terminator(latch)
        if term is not None and term.name in _BRANCHES and "loop_annotation" not in term.attributes:
            found.append(term)
    return found
