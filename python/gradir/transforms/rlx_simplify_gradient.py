"""rlx-simplify-gradient: Python rewrite patterns that leave gradients lean."""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from ..autodiff.simplify import simplify_function
from ..ir import functions as ir_functions
from ..ir import symbol_name
from ..passes.base import ModulePass, option


@dataclass(frozen=True)
class RlxSimplifyGradient(ModulePass):
    """Simplifies rlx functions (generated gradients above all) in place.

    TVM's gradient simplifier (``permute_dims`` of ``permute_dims``,
    ``transpose(matmul(a, b))`` -> ``matmul(transpose(b), transpose(a))``)
    plus identity shape ops, reshape/broadcast chains, reductions of
    broadcasts, ``x * 1``, ``x + 0``, symbolic zeros and constant folding of
    zeros/ones/full, then rlx-cse and rlx-dce.  Runs on every function with a
    body, or on ``func`` only.  rlx-gradient runs it on the function it
    generates unless ``simplify=false``.

        %t = "rlx.permute_dims"(%b) {axes = array<i64: 1, 0>} : ...
        %u = "rlx.permute_dims"(%t) {axes = array<i64: 1, 0>} : ...
        %m = "rlx.matmul"(%g, %u) : ...
        %o = "rlx.ones"() : () -> tensor<3x4xf32>
        %r = "rlx.multiply"(%m, %o) : ...
    becomes
        %m = "rlx.matmul"(%g, %b) : ...
    """

    name = "rlx-simplify-gradient"
    anchor = None
    func: str = option("", "simplify only this function (default: every function)")

    def apply(self, module: ir.Operation) -> None:
        module = module.operation
        if module.name == "func.func":   # run on one function (func.func(...) pipeline)
            functions = [module]
        else:
            functions = ir_functions(module)
        if self.func:
            functions = [f for f in functions if symbol_name(f) == self.func]
            if not functions:
                self.error(module, f"rlx-simplify-gradient: no function named '@{self.func}' "
                                   "in the module")
                raise self.failure()
        for fn in functions:
            if len(fn.regions[0].blocks):
                simplify_function(fn)
