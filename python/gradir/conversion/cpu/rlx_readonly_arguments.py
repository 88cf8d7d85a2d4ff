"""rlx-readonly-arguments: a public function's tensor arguments are the caller's, never written."""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from ...ir import functions
from ...passes.base import ModulePass

__all__ = ["RlxReadonlyArguments"]

WRITABLE = "bufferization.writable"


@dataclass(frozen=True)
class RlxReadonlyArguments(ModulePass):
    """Marks every tensor argument of a public function with a body
    ``bufferization.writable = false``, so that bufferization never writes
    into the buffer a caller passes: a tensor op that would update an
    argument in place (an ``scf.for`` whose carried tensor starts as the
    argument and a ``tensor.insert_slice`` into it, a ``linalg`` op whose
    init is the argument) works on a copy instead.

    ``one-shot-bufferize{bufferize-function-boundaries}`` takes a function
    argument to be writable unless it says otherwise, and then updates it in
    place: the caller's numpy array (or the device copy of a resident GPU
    argument) was silently overwritten, e.g. by the adjoint of a loop that
    zeroes its cotangent slice by slice.  The CPU and GPU pipelines run
    this pass right before bufferization.  An argument already marked
    ``bufferization.writable = true`` (a caller that donates its buffer)
    keeps its mark; private functions are left to the analysis across
    their calls.

        func.func @f(%a: tensor<4x3xf32>, %i: index) -> tensor<4x3xf32>
    becomes
        func.func @f(%a: tensor<4x3xf32> {bufferization.writable = false}, %i: index)
            -> tensor<4x3xf32>
    """

    name = "rlx-readonly-arguments"

    def apply(self, module: ir.Operation) -> None:
        for fn in functions(module, nested=True):
            attrs = fn.attributes
            if "sym_visibility" in attrs and \
                    ir.StringAttr(attrs["sym_visibility"]).value != "public":
                continue
            if not fn.regions[0].blocks:
                continue
            args = fn.regions[0].blocks[0].arguments
            old = list(ir.ArrayAttr(attrs["arg_attrs"])) if "arg_attrs" in attrs else []
            old += [ir.DictAttr.get({})] * (len(args) - len(old))
            new, changed = [], False
            for arg, dict_attr in zip(args, old):
                entries = {a.name: a.attr for a in ir.DictAttr(dict_attr)}
                if isinstance(arg.type, (ir.RankedTensorType, ir.UnrankedTensorType)) and WRITABLE not in entries:
                    entries[WRITABLE] = ir.BoolAttr.get(False)
                    changed = True
                new.append(ir.DictAttr.get(entries))
            if changed:
                attrs["arg_attrs"] = ir.ArrayAttr.get(new)
