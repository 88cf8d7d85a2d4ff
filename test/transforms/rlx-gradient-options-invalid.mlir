// Refusals that depend on options, one RUN line each.
// RUN: not gradir-opt %s --verify-diagnostics --rlx-gradient='target-index=2' 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: not gradir-opt %s --rlx-gradient='wrt=5' 2>&1 | FileCheck %s --check-prefix=WRT-RANGE
// RUN: not gradir-opt %s --rlx-gradient='wrt=0,0' 2>&1 | FileCheck %s --check-prefix=WRT-DUP
// RUN: not gradir-opt %s --rlx-gradient='wrt=2' 2>&1 | FileCheck %s --check-prefix=WRT-INT
// RUN: not gradir-opt %s --rlx-gradient='func=nope' 2>&1 | FileCheck %s --check-prefix=FUNC
// RUN: not gradir-opt %s --rlx-gradient='mode=forward' 2>&1 | FileCheck %s --check-prefix=MODE
// RUN: not gradir-opt %s --rlx-gradient='target-index=x' 2>&1 | FileCheck %s --check-prefix=TYPE
// RUN: not gradir-opt %s --rlx-gradient='mode=jvp split=true' 2>&1 | FileCheck %s --check-prefix=JVP-SPLIT
// RUN: not gradir-opt %s --rlx-gradient='mode=hvp remat=auto budget=0.5' 2>&1 | FileCheck %s --check-prefix=HVP-REMAT
// RUN: not gradir-opt %s --rlx-gradient='jacobian-mode=reverse' 2>&1 | FileCheck %s --check-prefix=JAC-MODE
// RUN: not gradir-opt %s --rlx-gradient='mode=jacobian jacobian-mode=both' 2>&1 | FileCheck %s --check-prefix=JAC-VALUE

// WRT-RANGE: rlx-gradient-options-invalid.mlir:[[@LINE+8]]:1: error: rlx-gradient: wrt index 5 is out of range: '@main' has 3 arguments
// WRT-DUP: rlx-gradient-options-invalid.mlir:[[@LINE+7]]:1: error: rlx-gradient: wrt index 0 is given twice
// WRT-INT: rlx-gradient-options-invalid.mlir:[[@LINE+6]]:1: error: rlx-gradient: wrt argument 2 has type tensor<2xi64>, which is not floating point
// FUNC: error: rlx-gradient: no function named '@nope' in the module
// MODE: <pass-pipeline>:1:{{[0-9]+}}: error: option 'mode' of pass 'rlx-gradient' must be one of adjoint, vjp, jvp, jacobian, hvp, hessian, got 'forward'
// TYPE: <pass-pipeline>:1:{{[0-9]+}}: error: option 'target-index' of pass 'rlx-gradient' expects int, got 'x'
// TARGET: rlx-gradient-options-invalid.mlir:[[@LINE+4]]:3: error: unexpected error: rlx-gradient: target-index 2 is out of range: '@main' has 2 results
// CHECK-NOT: Traceback
func.func @main(%x: tensor<3xf32>, %y: tensor<3xf32>, %i: tensor<2xi64>) -> (tensor<f32>, tensor<3xf32>) {
  %0 = "rlx.sum"(%x) : (tensor<3xf32>) -> tensor<f32>
  return %0, %y : tensor<f32>, tensor<3xf32>
}

// Forward-mode options.
// JVP-SPLIT: <pass-pipeline>:1:{{[0-9]+}}: error: option 'split' of pass 'rlx-gradient' is only used with mode=adjoint or mode=vjp
// HVP-REMAT: <pass-pipeline>:1:{{[0-9]+}}: error: option 'remat' of pass 'rlx-gradient' is only used with mode=adjoint or mode=vjp
// JAC-MODE: <pass-pipeline>:1:{{[0-9]+}}: error: option 'jacobian-mode' of pass 'rlx-gradient' is only used with mode=jacobian
// JAC-VALUE: <pass-pipeline>:1:{{[0-9]+}}: error: option 'jacobian-mode' of pass 'rlx-gradient' must be one of auto, forward, reverse, got 'both'
