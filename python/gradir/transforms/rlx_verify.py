"""rlx-verify: checks what the IRDL definitions of rlx and grad cannot."""

from __future__ import annotations

from dataclasses import dataclass

from ..dialects.verify import verify_module, verify_op
from ..passes.base import ModulePass

__all__ = ["RlxVerify", "verify_module", "verify_op"]


@dataclass(frozen=True)
class RlxVerify(ModulePass):
    """Checks rlx and grad ops beyond their IRDL definitions.

    IRDL checks operand/result counts, that operands are tensors/tuples and
    that required attributes exist.  This pass checks the rest against the
    shared inference table (``gradir.dialects.infer.INFER``): element types,
    axes in range and not repeated, broadcastable shapes, matmul/conv/pool
    shapes, optional attributes' kinds, split sections dividing the axis,
    tuple indices, and that every result type equals the inferred one;
    and that a constant ``scf.for`` step is positive (one computed at run
    time is checked by the compiled code and the interpreter).
    Valid IR is left unchanged; each problem is an error at the op:

        %0 = "rlx.add"(%a, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3xf32>
        error: 'rlx.add' op result type tensor<3xf32> does not match inferred tensor<2x3xf32>

        %1 = "rlx.sum"(%a) {axis = array<i64: 2>} : (tensor<2x3xf32>) -> tensor<f32>
        error: 'rlx.sum' op axis 2 is out of range for rank 2
    """

    name = "rlx-verify"
    anchor = None

    def apply(self, module) -> None:
        errors = verify_module(module)
        for loc, message in errors:
            self.error(loc, message)
        if errors:
            raise self.failure()
