// RUN: gradir-opt %s --rlx-distinct-results --split-input-file | FileCheck %s
// RUN: gradir-run %s --split-input-file --rlx-gradient --entry main_adjoint --random-inputs 0 | FileCheck %s --check-prefix=EXEC
// RUN: gradir-opt %s --split-input-file --rlx-gradient --rlx-lower-to-llvm | FileCheck %s --check-prefix=LLVM

// A value returned twice: the second copy goes to a fresh tensor.  So does an
// argument, a reshaped argument and a constant.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:[^:]*]]: tensor<3xf32>
// CHECK: %[[A:.*]] = "rlx.add"
// CHECK: %[[S:.*]] = "rlx.sum"
// CHECK: %[[E1:.*]] = bufferization.alloc_tensor() : tensor<3xf32>
// CHECK: %[[C1:.*]] = linalg.copy {{.*}}ins(%[[A]] : tensor<3xf32>) outs(%[[E1]] : tensor<3xf32>)
// CHECK: %[[E2:.*]] = bufferization.alloc_tensor() : tensor<3xf32>
// CHECK: %[[C2:.*]] = linalg.copy {{.*}}ins(%[[X]] : tensor<3xf32>) outs(%[[E2]] : tensor<3xf32>)
// CHECK: %[[C3:.*]] = linalg.copy {{.*}}ins(%{{.*}} : tensor<2xf32>)
// CHECK: %[[E4:.*]] = bufferization.alloc_tensor() : tensor<1x3xf32>
// CHECK: %[[C4:.*]] = linalg.copy {{.*}}ins(%{{.*}} : tensor<1x3xf32>)
// CHECK: return %[[S]], %[[A]], %[[C1]], %[[C2]], %[[C3]], %[[C4]] :
// EXEC: result 0: float32 ()
// EXEC: result 1: float32 (3,)
// EXEC: result 6: float32 (3,)
// EXEC: // -----
func.func @main(%x: tensor<3xf32>, %y: tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2xf32>, tensor<1x3xf32>) {
  %c = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = "rlx.add"(%x, %y) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %s = "rlx.sum"(%0) : (tensor<3xf32>) -> tensor<f32>
  %r = "rlx.reshape"(%x) : (tensor<3xf32>) -> tensor<1x3xf32>
  return %s, %0, %0, %x, %c, %r : tensor<f32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2xf32>, tensor<1x3xf32>
}

// -----

// The gradient of sum(x + y) returns one value twice; compiled, it runs.
// EXEC: result 0: float32 ()
// EXEC: result 1: float32 (3,)
// EXEC-NEXT: [1. 1. 1.]
// EXEC-NEXT: result 2: float32 (3,)
// EXEC-NEXT: [1. 1. 1.]
// LLVM-LABEL: llvm.func @main_adjoint
// CHECK-LABEL: func.func @main
// CHECK-NOT: linalg.copy
func.func @main(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<f32> {
  %0 = "rlx.add"(%x, %y) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = "rlx.sum"(%0) : (tensor<3xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

// exp's adjoint returns its forward result twice.
// EXEC: result 0: float32 ()
// EXEC: result 1: float32 (3,)
// LLVM-LABEL: llvm.func @main_adjoint
func.func @main(%x: tensor<3xf32>) -> tensor<f32> {
  %0 = "rlx.exp"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = "rlx.sum"(%0) : (tensor<3xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}
