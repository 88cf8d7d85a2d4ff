// The grad dialect: markers that steer reverse-mode differentiation (Relax
// semantics).  Each op is an identity on one tensor or tuple value: operand
// and result share one constraint, so they have the same type.  IRDL's any_of
// over builtin bases crashes the MLIR 22 loader, so "tensor or tuple" is
// checked by `rlx-verify` rather than here.
irdl.dialect @grad {
  // grad.start_checkpoint: start of a checkpointed region; the value is
  // recomputed in the backward pass instead of being saved.
  irdl.operation @start_checkpoint {
    %t = irdl.any
    irdl.operands(x: %t)
    irdl.results(result: %t)
  }

  // grad.end_checkpoint: end of a checkpointed region.
  irdl.operation @end_checkpoint {
    %t = irdl.any
    irdl.operands(x: %t)
    irdl.results(result: %t)
  }

  // grad.no_grad: stop-gradient; the gradient flowing into the operand is zero.
  irdl.operation @no_grad {
    %t = irdl.any
    irdl.operands(x: %t)
    irdl.results(result: %t)
  }
}
