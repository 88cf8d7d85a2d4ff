// RUN: gradir-opt %s --rlx-to-linalg=matmul-kernels=true | FileCheck %s
// RUN: gradir-opt %s --rlx-to-linalg | FileCheck %s --check-prefix=OFF

// rlx-to-linalg{matmul-kernels=true}: 2-D matmuls (a transposed operand read
// in place, a batched lhs against a 2-D rhs as rows, f16 computed in f32 as
// always) become linalg.contract ops marked gradir.kernel, which the CPU
// schedule leaves to rlx-matmul-kernels; so does a batched rhs, as a 3-D
// contraction (matmul-batched-kernels.mlir).  Without the option nothing is
// marked.
// CHECK-LABEL: func.func @lowered(
// CHECK: linalg.contract indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] {gradir.kernel} ins(%arg0, %arg1 : tensor<4x3xf32>, tensor<5x3xf32>)
// CHECK: linalg.contract {{.*}} {gradir.kernel} ins({{.*}} : tensor<8x3xf32>, tensor<3x5xf32>)
// CHECK: linalg.contract {{.*}} {gradir.kernel} ins({{.*}} : tensor<4x3xf32>, tensor<3x5xf32>)
// CHECK: linalg.contract {{.*}} {gradir.kernel} ins(%arg2, %arg6 : tensor<2x4x3xf32>, tensor<2x3x5xf32>) outs({{.*}} : tensor<2x4x5xf32>)
// CHECK-NOT: linalg.batch_matmul
// OFF-NOT: gradir.kernel
// OFF-NOT: linalg.contract
func.func @lowered(%a: tensor<4x3xf32>, %w: tensor<5x3xf32>, %x: tensor<2x4x3xf32>, %b: tensor<3x5xf32>,
                   %h: tensor<4x3xf16>, %g: tensor<3x5xf16>, %bb: tensor<2x3x5xf32>)
    -> (tensor<4x5xf32>, tensor<2x4x5xf32>, tensor<4x5xf16>, tensor<2x4x5xf32>) {
  %wt = "rlx.permute_dims"(%w) {axes = array<i64: 1, 0>} : (tensor<5x3xf32>) -> tensor<3x5xf32>
  %0 = "rlx.matmul"(%a, %wt) : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  %1 = "rlx.matmul"(%x, %b) : (tensor<2x4x3xf32>, tensor<3x5xf32>) -> tensor<2x4x5xf32>
  %2 = "rlx.matmul"(%h, %g) : (tensor<4x3xf16>, tensor<3x5xf16>) -> tensor<4x5xf16>
  %3 = "rlx.matmul"(%x, %bb) : (tensor<2x4x3xf32>, tensor<2x3x5xf32>) -> tensor<2x4x5xf32>
  return %0, %1, %2, %3 : tensor<4x5xf32>, tensor<2x4x5xf32>, tensor<4x5xf16>, tensor<2x4x5xf32>
}

// A reshape before or after a kernel matmul: each sits in an
// scf.execute_region no_inline of its own (the matmul too), which
// elementwise fusion's reshape propagation cannot fold into the matmul
// (it would become a generic contraction of higher rank the kernels do
// not take; LeNet's flatten before its first dense layer).
// CHECK-LABEL: func.func @reshaped(
// CHECK: %[[A:.*]] = scf.execute_region -> tensor<4x3xf32> no_inline {
// CHECK-NEXT: %[[R:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0], [1, 2]] : tensor<4x1x3xf32> into tensor<4x3xf32>
// CHECK-NEXT: scf.yield %[[R]]
// CHECK: %[[M:.*]] = scf.execute_region -> tensor<4x6xf32> no_inline {
// CHECK: %[[C:.*]] = linalg.contract {{.*}} {gradir.kernel} ins(%[[A]], %arg1 : tensor<4x3xf32>, tensor<3x6xf32>)
// CHECK-NEXT: scf.yield %[[C]]
// CHECK: tensor.expand_shape %[[M]]
// A kernel matmul that no reshape reads or makes stays as it is.
// CHECK-LABEL: func.func @plain(
// CHECK-NOT: scf.execute_region
// CHECK: linalg.contract
// CHECK-NOT: scf.execute_region
// CHECK: return
func.func @reshaped(%x: tensor<4x1x3xf32>, %b: tensor<3x6xf32>) -> tensor<4x2x3xf32> {
  %f = "rlx.reshape"(%x) : (tensor<4x1x3xf32>) -> tensor<4x3xf32>
  %m = "rlx.matmul"(%f, %b) : (tensor<4x3xf32>, tensor<3x6xf32>) -> tensor<4x6xf32>
  %r = "rlx.reshape"(%m) : (tensor<4x6xf32>) -> tensor<4x2x3xf32>
  return %r : tensor<4x2x3xf32>
}
func.func @plain(%a: tensor<4x3xf32>, %b: tensor<3x6xf32>) -> tensor<4x6xf32> {
  %m = "rlx.matmul"(%a, %b) : (tensor<4x3xf32>, tensor<3x6xf32>) -> tensor<4x6xf32>
  return %m : tensor<4x6xf32>
}

// A reshape reached through elementwise generics (the bias add between the
// attention's output projection and its unflatten): the matmul sits in its
// region all the same, so fusion cannot turn it into a 3-D contraction.
// CHECK-LABEL: func.func @reshaped_after_bias(
// CHECK: %[[M:.*]] = scf.execute_region -> tensor<6x4xf32> no_inline {
// CHECK: %[[C:.*]] = linalg.contract {{.*}} {gradir.kernel}
// CHECK-NEXT: scf.yield %[[C]]
// CHECK: linalg.generic {{.*}} ins(%[[M]], %arg2 : tensor<6x4xf32>, tensor<4xf32>)
// CHECK: tensor.expand_shape
func.func @reshaped_after_bias(%x: tensor<6x3xf32>, %w: tensor<3x4xf32>, %b: tensor<4xf32>) -> tensor<3x2x4xf32> {
  %m = "rlx.matmul"(%x, %w) : (tensor<6x3xf32>, tensor<3x4xf32>) -> tensor<6x4xf32>
  %a = "rlx.add"(%m, %b) : (tensor<6x4xf32>, tensor<4xf32>) -> tensor<6x4xf32>
  %r = "rlx.reshape"(%a) : (tensor<6x4xf32>) -> tensor<3x2x4xf32>
  return %r : tensor<3x2x4xf32>
}

// A batched lhs against a transposed 2-D weight (x @ W^T of a dense layer on
// (B, S, E) activations): the rows of x times W read in place, no transpose.
// CHECK-LABEL: func.func @batched_transposed_weight(
// CHECK-NOT: linalg.transpose
// CHECK: linalg.contract indexing_maps = [#{{.*}}, #[[$NK:.*]], #{{.*}}] {gradir.kernel} ins({{.*}}, %arg1 : tensor<6x3xf32>, tensor<4x3xf32>)
// CHECK: tensor.expand_shape
func.func @batched_transposed_weight(%x: tensor<2x3x3xf32>, %w: tensor<4x3xf32>) -> tensor<2x3x4xf32> {
  %wt = "rlx.permute_dims"(%w) : (tensor<4x3xf32>) -> tensor<3x4xf32>
  %m = "rlx.matmul"(%x, %wt) : (tensor<2x3x3xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>
  return %m : tensor<2x3x4xf32>
}
