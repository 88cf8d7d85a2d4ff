"""rlx-loop-hints: LLVM loop metadata on every loop of the lowered code, so
LLVM does not redo what the MLIR schedule already did (unrolling)."""

from __future__ import annotations

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
    """Marks every loop of the LLVM-dialect functions with ``llvm.loop`` metadata
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
    its body).  A branch that already has a ``loop_annotation`` keeps it.

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
        back_edges = []
        for fn in functions(module, "llvm.func", nested=True):
            back_edges += _back_edges(fn)
        _compat.set_attribute_from(back_edges, "loop_annotation", annotation)


def _back_edges(fn: ir.Operation) -> list[ir.Operation]:
    """The branches of ``fn`` that close a loop and have no annotation yet.
    Blocks and their successors only: no op is wrapped for Python but these
    terminators, as plain ``ir.Operation``s (wrapping an LLVM op imports
    mlir.dialects.llvm, 11 ms; issue 14, compile time)."""
    blocks = list(fn.regions[0].blocks)     # none for a declaration
    if len(blocks) < 2:
        return []
    order = {block: i for i, block in enumerate(blocks)}
    found = []
    for i, block in enumerate(blocks):
        if not any(order[succ] <= i for succ in block.successors):
            continue
        term = _compat.terminator(block)
        if term is not None and term.name in _BRANCHES and "loop_annotation" not in term.attributes:
            found.append(term)
    return found
