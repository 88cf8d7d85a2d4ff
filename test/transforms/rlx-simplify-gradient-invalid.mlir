// RUN: not gradir-opt %s --rlx-simplify-gradient='func=nope' 2>&1 | FileCheck %s
// RUN: not gradir-opt %s --rlx-simplify-gradient='depth=2' 2>&1 | FileCheck %s --check-prefix=OPTION

// CHECK: error: rlx-simplify-gradient: no function named '@nope' in the module
// CHECK-NOT: Traceback
// OPTION: error: no such option 'depth' for pass 'rlx-simplify-gradient' (options: func)
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  return %x : tensor<3xf32>
}
