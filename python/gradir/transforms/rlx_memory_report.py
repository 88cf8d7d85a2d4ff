"""rlx-memory-report: the peak bytes of live tensors of each function, as a remark."""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from ..autodiff.memory import loop_summaries, memory_report
from ..ir import functions as ir_functions
from ..ir import symbol_name
from ..passes.base import ModulePass, option


@dataclass(frozen=True)
class RlxMemoryReport(ModulePass):
    """Reports the peak bytes of live tensors of each function (a remark).

    Ops run in program order; a tensor is live from the op that makes it to
    its last use, arguments throughout (see ``gradir.autodiff.memory``).  The
    remark splits the peak into arguments, values saved for the backward and
    temporaries, and gives the function's FLOPs.  The IR is not changed.

        func.func @main(%x: tensor<4xf32>) -> tensor<f32> {   // 16 bytes
          %0 = "rlx.exp"(%x) ...                              // 16 bytes
          %1 = "rlx.sum"(%0) ...                              // 4 bytes
          return %1 : tensor<f32>
        }
    remark: @main: peak 36 bytes = arguments 16 + saved for backward 0 +
            temporaries 20, at 'rlx.sum' (op 1); ...

    The forward part of ``@f_adjoint``, ``@f_vjp`` and ``@f_fwd`` computes
    ``@f``'s results (``forward-results`` overrides it); the values it
    makes that the rest uses or returns are the saved ones.
    """

    name = "rlx-memory-report"
    anchor = None
    func: str = option("", "the function to report (default: every function with a body)")
    forward_results: int = option(-1, "how many leading results the forward part computes "
                                      "(default: @f's results for @f_adjoint/_vjp/_fwd, "
                                      "else all)")

    def apply(self, module: ir.Operation) -> None:
        if module.name == "func.func":
            functions, parent = [module], module.parent
            parent = parent.operation if parent is not None else None
        else:
            functions, parent = ir_functions(module), module
        found = False
        for fn in functions:
            name = symbol_name(fn)
            if self.func and name != self.func:
                continue
            found = True
            if len(fn.regions[0].blocks) != 1:
                if self.func:
                    self.error(fn, f"rlx-memory-report: '@{name}' has no body or more than "
                                   "one block")
                    raise self.failure()
                continue
            n = None if self.forward_results < 0 else self.forward_results
            report = memory_report(fn, n, parent)
            self.remark(fn, f"@{name}: {report.summary()}")
            for loop, trips, per_iter, stored in loop_summaries(fn.regions[0].blocks[0]):
                count = f"{trips} trips" if trips is not None else "a dynamic trip count"
                total = f" = {per_iter * trips}" if trips is not None else ""
                self.remark(loop, f"@{name}: '{loop.name}' with {count}: carries {per_iter} "
                                  f"bytes per iteration (storing every iteration: "
                                  f"{per_iter} x trips{total} bytes); stores {stored} bytes "
                                  "for the backward")
        if self.func and not found and module.name != "func.func":
            self.error(module, f"rlx-memory-report: no function named '@{self.func}'")
            raise self.failure()
